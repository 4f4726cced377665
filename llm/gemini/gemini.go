package gemini

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/vendorhttp"
)

// DefaultBaseURL is the Gemini Developer API's root.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/"

// envVar names the variable that holds the API key, for hints.
const envVar = "GEMINI_API_KEY"

// Config configures a [Provider]. The zero value talks to the Gemini API and
// fails every call with an auth error until APIKey or Token is set.
type Config struct {
	// APIKey is the Gemini API key, sent as x-goog-api-key.
	APIKey string
	// BaseURL is the API root without the version; DefaultBaseURL when empty.
	// A trailing "/v1beta" is tolerated.
	BaseURL string
	// HTTPClient sends the requests; http.DefaultClient when nil. It is
	// copied, never modified: the copy refuses redirects to another host
	// ([vendorhttp.GuardRedirects]).
	HTTPClient *http.Client
	// Name is the provider name stamped on replies and errors; "google" when
	// empty.
	Name string
	// Token, when set, is called before every request for an OAuth bearer
	// token, sent as "Authorization: Bearer …" instead of the API key. The
	// source refreshes expired tokens itself.
	Token func(ctx context.Context) (string, error)
	// Headers are extra headers sent with every request.
	Headers map[string]string
}

// Provider streams replies from Gemini. It implements [llm.Provider] and
// [llm.AuthValidator] and is safe for concurrent use.
type Provider struct {
	cfg    Config
	name   string
	base   string // the API root with its version, ending in "/"
	client *http.Client
}

var (
	_ llm.Provider      = (*Provider)(nil)
	_ llm.AuthValidator = (*Provider)(nil)
)

// New returns a provider for cfg. It makes no request.
func New(cfg Config) *Provider {
	base := cmp.Or(cfg.BaseURL, DefaultBaseURL)
	base = strings.TrimSuffix(strings.TrimSuffix(base, "/"), "/v1beta") + "/v1beta/"
	return &Provider{cfg: cfg, name: cmp.Or(cfg.Name, "google"), base: base,
		client: vendorhttp.GuardRedirects(cfg.HTTPClient)}
}

// Stream sends req and yields the reply (SPEC PROV-1). The history is first
// prepared for this provider and model ([llm.PrepareHistory], SPEC PROV-5).
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	return func(yield func(llm.Delta, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		path, err := modelPath(req.Model)
		if err != nil {
			yield(llm.Delta{}, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: err.Error(), Err: err})
			return
		}
		body, err := p.buildRequest(req)
		if err != nil {
			yield(llm.Delta{}, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: err.Error(), Err: err})
			return
		}
		resp, lerr := p.do(ctx, http.MethodPost, path+":streamGenerateContent?alt=sse", body)
		if lerr != nil {
			yield(llm.Delta{}, lerr)
			return
		}
		defer resp.Body.Close()
		newStream(p.name, req, resp.Body).run(ctx, yield)
	}
}

// ValidateAuth checks the credentials by listing one page of models (SPEC
// PROV-4).
func (p *Provider) ValidateAuth(ctx context.Context) error {
	resp, err := p.do(ctx, http.MethodGet, "models?pageSize=1", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, vendorhttp.MaxErrorBody)); err != nil {
		return llm.FromTransport(ctx, p.name, err)
	}
	return nil
}

// modelPath is the resource name of a model: "models/<name>", or the name
// as it is when it already is one (models/…, tunedModels/…).
func modelPath(model string) (string, error) {
	switch {
	case model == "":
		return "", errors.New("no model named")
	case strings.ContainsAny(model, "?&#%") || strings.Contains(model, ".."):
		return "", fmt.Errorf("model %q: not a model name", model)
	case strings.HasPrefix(model, "models/"), strings.HasPrefix(model, "tunedModels/"):
		return model, nil
	}
	return "models/" + model, nil
}

// do sends one request to path under the API root, with body encoded as
// JSON when it is not nil, and returns the reply when its status is 2xx.
// Every call is one round trip: [llm.Retrying] decides what to repeat
// (SPEC PROV-7). An error reply keeps its status, headers and body, so
// [vendorhttp.FromHTTP] sees the Retry-After header and the RetryInfo detail alike.
func (p *Provider) do(ctx context.Context, method, path string, body any) (*http.Response, *llm.Error) {
	if p.cfg.APIKey == "" && p.cfg.Token == nil {
		return nil, llm.AuthMissing(p.name, envVar)
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: err.Error(), Err: err}
		}
		rd = bytes.NewReader(b)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, p.base+path, rd)
	if err != nil {
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: err.Error(), Err: err}
	}
	for k, v := range p.cfg.Headers {
		hreq.Header.Set(k, v)
	}
	if body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if p.cfg.Token != nil {
		tok, err := p.cfg.Token(ctx)
		if err != nil {
			if e, ok := llm.AsError(err); ok {
				return nil, e
			}
			if ctx.Err() != nil {
				return nil, llm.FromTransport(ctx, p.name, err)
			}
			return nil, &llm.Error{Kind: llm.KindAuth, Provider: p.name, Message: "token source: " + err.Error(), Err: err}
		}
		hreq.Header.Set("Authorization", "Bearer "+tok)
	} else {
		hreq.Header.Set("x-goog-api-key", p.cfg.APIKey)
	}
	resp, err := p.client.Do(hreq)
	if err != nil {
		return nil, vendorhttp.FromRoundTrip(ctx, p.name, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, vendorhttp.FromResponse(p.name, resp).WithAuthHint(envVar)
	}
	return resp, nil
}
