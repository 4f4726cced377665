package anthropic

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/vendorhttp"
)

// DefaultName is the provider name stamped on replies when Config.Name is empty.
const DefaultName = "anthropic"

// DefaultBaseURL is the API's address.
const DefaultBaseURL = "https://api.anthropic.com"

// apiVersion is the anthropic-version header every request carries: the
// version the official SDK (v2.12.0) sent, whose request body this adapter
// writes.
const apiVersion = "2026-10-21"

// userAgent names the client in the User-Agent header.
const userAgent = "rein (anthropic adapter)"

// envVar names the variable that usually holds the key, for hints.
const envVar = "ANTHROPIC_API_KEY"

// maxBody bounds how much of the model list is read.
const maxBody = 1 << 20

// Config configures a [Provider]. The zero value talks to api.anthropic.com
// and fails every call with an auth error until a key or token is set.
type Config struct {
	// APIKey is sent as the x-api-key header.
	APIKey string
	// BaseURL replaces DefaultBaseURL (a proxy, a gateway, a mock server).
	// A trailing slash is tolerated.
	BaseURL string
	// HTTPClient sends the requests; nil means http.DefaultClient. It is
	// copied, never modified: the copy refuses redirects to another host
	// ([vendorhttp.GuardRedirects]).
	HTTPClient *http.Client
	// Name is the provider name stamped on replies; default "anthropic".
	Name string
	// Token, when set, is called before every request for an OAuth or other
	// bearer token, sent as "Authorization: Bearer …"; it takes precedence over
	// APIKey and refreshes expired tokens itself.
	Token func(ctx context.Context) (string, error)
	// Headers are extra request headers (an anthropic-beta flag, say). They
	// may replace the adapter's own (Accept, anthropic-version, User-Agent),
	// never the credentials.
	Headers map[string]string
}

// Provider talks to the Anthropic Messages API. It is safe for concurrent use.
type Provider struct {
	cfg        Config
	name       string
	base       string // the base URL without its trailing slash
	client     *http.Client
	headerKeys []string // the keys of cfg.Headers, sorted
}

var (
	_ llm.Provider      = (*Provider)(nil)
	_ llm.AuthValidator = (*Provider)(nil)
)

// New returns a provider for cfg. Nothing is read from the environment: the
// caller resolves keys, so a stray ANTHROPIC_* variable never overrides them.
// It makes no request.
func New(cfg Config) *Provider {
	keys := make([]string, 0, len(cfg.Headers))
	for k := range cfg.Headers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return &Provider{
		cfg:        cfg,
		name:       cmp.Or(cfg.Name, DefaultName),
		base:       strings.TrimSuffix(cmp.Or(cfg.BaseURL, DefaultBaseURL), "/"),
		client:     vendorhttp.GuardRedirects(cfg.HTTPClient),
		headerKeys: keys,
	}
}

// Name returns the provider name stamped on replies.
func (p *Provider) Name() string { return p.name }

// credential is the header that carries the caller's credentials.
type credential struct{ header, value string }

// auth returns the credentials: a bearer token from Config.Token, else the
// API key, else an llm.AuthMissing error.
func (p *Provider) auth(ctx context.Context) (credential, error) {
	if p.cfg.Token != nil {
		tok, err := p.cfg.Token(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return credential{}, llm.FromTransport(ctx, p.name, err)
			}
			return credential{}, &llm.Error{Kind: llm.KindAuth, Provider: p.name, Message: "token source: " + err.Error(), Err: err,
				Hint: "the OAuth token could not be obtained; log in again"}
		}
		if tok == "" {
			return credential{}, llm.AuthMissing(p.name, envVar)
		}
		return credential{"Authorization", "Bearer " + tok}, nil
	}
	if p.cfg.APIKey == "" {
		return credential{}, llm.AuthMissing(p.name, envVar)
	}
	return credential{"x-api-key", p.cfg.APIKey}, nil
}

// Stream sends req and yields the reply as it arrives (see llm.Provider).
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	return func(yield func(llm.Delta, error) bool) {
		cred, err := p.auth(ctx)
		if err != nil {
			yield(llm.Delta{}, err)
			return
		}
		msgs := llm.PrepareHistory(req.Messages, p.name, req.Model, llm.DowngradeDrop)
		params, err := buildRequest(req, msgs)
		var body []byte
		if err == nil {
			body, err = encodeBody(params)
		}
		if err != nil {
			yield(llm.Delta{}, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: err.Error(), Err: err})
			return
		}
		resp, lerr := p.do(ctx, http.MethodPost, "/v1/messages", body, cred)
		if lerr != nil {
			yield(llm.Delta{}, lerr)
			return
		}
		defer resp.Body.Close()
		s := newStream(p.name, req, resp)
		s.run(ctx, yield)
	}
}

// ValidateAuth checks the credentials with a cheap call: list one model.
func (p *Provider) ValidateAuth(ctx context.Context) error {
	cred, err := p.auth(ctx)
	if err != nil {
		return err
	}
	resp, lerr := p.do(ctx, http.MethodGet, "/v1/models?limit=1", nil, cred)
	if lerr != nil {
		return lerr
	}
	defer resp.Body.Close()
	// The list must be a JSON object: a page of HTML means the base URL is
	// not the API. An empty body reads as io.EOF, a connection cut short.
	ct := resp.Header.Get("Content-Type")
	if mt, _, _ := mime.ParseMediaType(ct); !strings.Contains(mt, "application/json") && !strings.HasSuffix(mt, "+json") {
		return p.requestError(ctx, fmt.Errorf("the model list came as %q, not JSON", ct))
	}
	var page struct{}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBody)).Decode(&page); err != nil {
		return p.requestError(ctx, fmt.Errorf("the model list: %w", err))
	}
	return nil
}

// do sends one request to path under the base URL, with body as JSON when
// it is not nil, and returns the reply when its status is 2xx. Every call is
// one round trip: llm.Retrying decides what to repeat (SPEC PROV-7). An error
// reply keeps its status, headers and body, for vendorhttp.FromHTTP.
func (p *Provider) do(ctx context.Context, method, path string, body []byte, cred credential) (*http.Response, *llm.Error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, p.base+path, rd)
	if err != nil { // a base URL that does not parse
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = fmt.Errorf("base URL %q: %w", p.base, ue.Err)
		}
		return nil, p.requestError(ctx, err)
	}
	h := hreq.Header
	if body != nil {
		h.Set("Content-Type", "application/json")
	}
	h.Set("Accept", "application/json")
	h.Set("User-Agent", userAgent)
	h.Set("anthropic-version", apiVersion)
	for _, k := range p.headerKeys {
		h.Set(k, p.cfg.Headers[k])
	}
	// One credential only, whatever Config.Headers held.
	h.Del("x-api-key")
	h.Del("Authorization")
	h.Set(cred.header, cred.value)

	resp, err := p.client.Do(hreq)
	if err != nil {
		return nil, p.requestError(ctx, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return resp, nil
	}
	if ctx.Err() != nil {
		resp.Body.Close()
		return nil, p.requestError(ctx, ctx.Err())
	}
	return nil, vendorhttp.FromResponse(p.name, resp).WithAuthHint(envVar)
}

// requestError classifies a failure of the request itself, before any
// response ([vendorhttp.FromRoundTrip]).
func (p *Provider) requestError(ctx context.Context, err error) *llm.Error {
	e := vendorhttp.FromRoundTrip(ctx, p.name, err)
	if e.Kind == llm.KindStreamCut {
		// The connection closed before any response: nothing was streamed.
		e.Kind = llm.KindNetwork
	}
	return e
}
