package gemini

import (
	"cmp"
	"context"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/genai"

	"github.com/reinhq/rein/llm"
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
	// HTTPClient sends the requests; a plain client when nil. Its transport is
	// wrapped, never modified.
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
	cfg     Config
	name    string
	client  *genai.Client
	send    *http.Client // sends the streamed requests the SDK built
	initErr error
}

var (
	_ llm.Provider      = (*Provider)(nil)
	_ llm.AuthValidator = (*Provider)(nil)
)

// New returns a provider for cfg. It makes no request.
func New(cfg Config) *Provider {
	p := &Provider{cfg: cfg, name: cmp.Or(cfg.Name, "google")}
	hc := &http.Client{}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		hc = &c
	}
	send := *hc
	// The SDK's client has put the jar's cookies on the request already.
	send.Jar = nil
	p.send = &send
	hc.Transport = &transport{base: cmp.Or[http.RoundTripper](hc.Transport, http.DefaultTransport)}
	headers := http.Header{}
	for k, v := range cfg.Headers {
		headers.Set(k, v)
	}
	base := cmp.Or(cfg.BaseURL, DefaultBaseURL)
	base = strings.TrimSuffix(strings.TrimSuffix(base, "/"), "/v1beta") + "/"
	// The SDK insists on a key for the Gemini API backend. Without one every
	// call fails before any request (AuthMissing), and with a Token the
	// transport drops the key header.
	key := cmp.Or(cfg.APIKey, "unused")
	p.client, p.initErr = genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:     key,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: hc,
		HTTPOptions: genai.HTTPOptions{
			BaseURL:    base,
			APIVersion: "v1beta",
			Headers:    headers,
			// One attempt: llm.Retrying decides what to repeat (SPEC PROV-7).
			RetryOptions: &genai.HTTPRetryOptions{Attempts: genai.Ptr[int32](1)},
		},
	})
	return p
}

// Stream sends req and yields the reply (SPEC PROV-1). The history is first
// prepared for this provider and model ([llm.PrepareHistory], SPEC PROV-5).
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	return func(yield func(llm.Delta, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		hreq, err := p.request(ctx, req)
		if err != nil {
			yield(llm.Delta{}, err)
			return
		}
		resp, rerr := p.send.Do(hreq)
		if rerr != nil {
			if ue, ok := errors.AsType[*url.Error](rerr); ok {
				rerr = ue.Err // what the round trip itself reported
			}
			yield(llm.Delta{}, llm.FromTransport(ctx, p.name, rerr))
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
			yield(llm.Delta{}, llm.FromHTTP(p.name, resp.StatusCode, resp.Header, body).WithAuthHint(envVar))
			return
		}
		newStream(p.name, req, resp.Body).run(ctx, yield)
	}
}

// request has the SDK build the streamed request for req, stopped by the
// transport before it is sent, and returns it bound to ctx.
func (p *Provider) request(ctx context.Context, req *llm.Request) (*http.Request, *llm.Error) {
	cctx, c, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	contents, config, berr := p.buildRequest(req)
	if berr != nil {
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: berr.Error(), Err: berr}
	}
	c.intercept = true
	for _, err := range p.client.Models.GenerateContentStream(cctx, req.Model, contents, config) {
		if err != nil && !errors.Is(err, errIntercepted) {
			return nil, p.classify(cctx, c, err)
		}
	}
	if c.req == nil {
		return nil, &llm.Error{Kind: llm.KindUnknown, Provider: p.name, Message: "the SDK built no request"}
	}
	hreq := c.req.Clone(ctx)
	if c.req.GetBody != nil {
		body, err := c.req.GetBody()
		if err != nil {
			return nil, &llm.Error{Kind: llm.KindUnknown, Provider: p.name, Message: err.Error(), Err: err}
		}
		hreq.Body = body
	}
	return hreq, nil
}

// ValidateAuth checks the credentials by listing one page of models (SPEC
// PROV-4).
func (p *Provider) ValidateAuth(ctx context.Context) error {
	ctx, c, err := p.begin(ctx)
	if err != nil {
		return err
	}
	if _, err := p.client.Models.List(ctx, &genai.ListModelsConfig{PageSize: 1}); err != nil {
		return p.classify(ctx, c, err)
	}
	return nil
}

// begin checks that the provider can make a call, fetches the bearer token
// when there is a token source, and returns ctx carrying the capture that
// the transport fills in.
func (p *Provider) begin(ctx context.Context) (context.Context, *capture, *llm.Error) {
	if p.initErr != nil {
		return ctx, nil, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: p.initErr.Error(), Err: p.initErr}
	}
	if p.cfg.APIKey == "" && p.cfg.Token == nil {
		return ctx, nil, llm.AuthMissing(p.name, envVar)
	}
	c := &capture{}
	if p.cfg.Token != nil {
		tok, err := p.cfg.Token(ctx)
		if err != nil {
			if e, ok := llm.AsError(err); ok {
				return ctx, nil, e
			}
			if ctx.Err() != nil {
				return ctx, nil, llm.FromTransport(ctx, p.name, err)
			}
			return ctx, nil, &llm.Error{Kind: llm.KindAuth, Provider: p.name, Message: "token source: " + err.Error(), Err: err}
		}
		c.token = tok
	}
	return context.WithValue(ctx, captureKey{}, c), c, nil
}

// classify turns an error of the SDK into an *llm.Error, preferring what the
// transport saw: a failed round trip, an error reply, a broken body.
func (p *Provider) classify(ctx context.Context, c *capture, err error) *llm.Error {
	switch {
	case c.rtErr != nil:
		return llm.FromTransport(ctx, p.name, c.rtErr)
	case c.status != 0:
		return llm.FromHTTP(p.name, c.status, c.header, c.body).WithAuthHint(envVar)
	case c.bodyErr != nil, ctx.Err() != nil:
		return llm.FromTransport(ctx, p.name, cmp.Or(c.bodyErr, ctx.Err()))
	}
	var apiErr genai.APIError
	if errors.As(err, &apiErr) { // an error object inside a 200 stream
		body := apiErrorBody(apiErr)
		return llm.FromHTTP(p.name, cmp.Or(apiErr.Code, http.StatusInternalServerError), nil, body).WithAuthHint(envVar)
	}
	if !c.sent {
		return &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: err.Error(), Err: err}
	}
	// The reply arrived whole, yet the SDK could not read it.
	return llm.Malformed(p.name, err)
}
