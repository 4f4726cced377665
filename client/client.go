package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Options configure a [Client]. The zero value talks without credentials
// through a default HTTP client.
type Options struct {
	// HTTPClient sends the requests; nil is a client with Go's default
	// transport and no overall timeout (event streams stay open for
	// hours: bound calls with their ctx instead).
	HTTPClient *http.Client
	// Token is sent as Authorization: Bearer <Token>.
	Token string
	// TokenFunc, when set, is asked for the token before every request
	// (and every reconnection of an event stream) and wins over Token: for
	// tokens that expire and are refreshed. An error fails the request.
	TokenFunc func(ctx context.Context) (string, error)
	// UserAgent names the program; "" is "rein-client".
	UserAgent string
	// ReconnectMin and ReconnectMax bound the wait before reopening a
	// dropped event stream: it starts at ReconnectMin (or the server's
	// retry: field), doubles with each failed attempt up to ReconnectMax,
	// with ±20% jitter. Zero means 250ms and 15s.
	ReconnectMin, ReconnectMax time.Duration
	// MaxReconnects is how many attempts in a row may fail — no
	// connection, or a connection that ended before delivering an event —
	// before Events gives up and yields the last error. 0 means 10;
	// negative means no limit (ctx still ends it).
	MaxReconnects int
	// PollInterval is the longest wait between two looks at a run in
	// [Client.Wait]; 0 means 2s. Waits start at a tenth of it.
	PollInterval time.Duration
}

// Client talks to one rein server. It is safe for concurrent use.
type Client struct {
	base *url.URL
	http *http.Client
	opts Options
}

// New returns a client of the server at baseURL ("http://127.0.0.1:8080",
// or with a path prefix the server is mounted under:
// "https://host/rein").
func New(baseURL string, opts Options) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return nil, fmt.Errorf("client: base URL %q: %w", baseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("client: base URL %q: want http(s)://host[:port][/prefix], without query or fragment", baseURL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "rein-client"
	}
	if opts.ReconnectMin <= 0 {
		opts.ReconnectMin = 250 * time.Millisecond
	}
	if opts.ReconnectMax <= 0 {
		opts.ReconnectMax = 15 * time.Second
	}
	opts.ReconnectMax = max(opts.ReconnectMax, opts.ReconnectMin)
	if opts.MaxReconnects == 0 {
		opts.MaxReconnects = 10
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 2 * time.Second
	}
	return &Client{base: u, http: opts.HTTPClient, opts: opts}, nil
}

// endpoint returns the URL of path (its variable segments already
// escaped) with query.
func (c *Client) endpoint(path string, query url.Values) string {
	s := c.base.String() + path
	if len(query) > 0 {
		s += "?" + query.Encode()
	}
	return s
}

// seg escapes an id for a path segment; an empty id is an error, since it
// would name another endpoint (GET /sessions/ is not GET /sessions/{id}).
func seg(what, id string) (string, error) {
	if id == "" {
		return "", fmt.Errorf("client: empty %s id", what)
	}
	return url.PathEscape(id), nil
}

// newRequest builds a request with the client's headers and credentials;
// body, when not nil, is sent as JSON.
func (c *Client) newRequest(ctx context.Context, method, path string, query url.Values, body any) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("client: %s %s: encode body: %w", method, path, err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint(path, query), r)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, application/problem+json")
	req.Header.Set("User-Agent", c.opts.UserAgent)
	tok := c.opts.Token
	if c.opts.TokenFunc != nil {
		if tok, err = c.opts.TokenFunc(ctx); err != nil {
			return nil, fmt.Errorf("client: %s %s: token: %w", method, path, err)
		}
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return req, nil
}

// send performs a request and returns the response when its status is
// 2xx; any other status is an *Error, its body consumed.
func (c *Client) send(req *http.Request) (*http.Response, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the method and URL
		}
		return nil, fmt.Errorf("client: %s %s: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, decodeError(req, resp)
	}
	return resp, nil
}

// do sends a JSON request and decodes a JSON answer into out (nil: the
// body is discarded).
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	req, err := c.newRequest(ctx, method, path, query, body)
	if err != nil {
		return err
	}
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("client: %s %s: decode %d response: %w", method, req.URL.Path, resp.StatusCode, err)
	}
	return nil
}
