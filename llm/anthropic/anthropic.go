package anthropic

import (
	"bytes"
	"context"
	"errors"
	"io"
	"iter"
	"net/http"
	"slices"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/reinhq/rein/llm"
)

// DefaultName is the provider name stamped on replies when Config.Name is empty.
const DefaultName = "anthropic"

// DefaultBaseURL is the API's address.
const DefaultBaseURL = "https://api.anthropic.com"

// envVar names the variable that usually holds the key, for hints.
const envVar = "ANTHROPIC_API_KEY"

// Config configures a [Provider]. The zero value talks to api.anthropic.com
// and fails every call with an auth error until a key or token is set.
type Config struct {
	// APIKey is sent as the x-api-key header.
	APIKey string
	// BaseURL replaces DefaultBaseURL (a proxy, a gateway, a mock server).
	BaseURL string
	// HTTPClient sends the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Name is the provider name stamped on replies; default "anthropic".
	Name string
	// Token, when set, is called before every request for an OAuth or other
	// bearer token, sent as "Authorization: Bearer …"; it takes precedence over
	// APIKey and refreshes expired tokens itself.
	Token func(ctx context.Context) (string, error)
	// Headers are extra request headers (an anthropic-beta flag, say).
	Headers map[string]string
}

// Provider talks to the Anthropic Messages API. It is safe for concurrent use.
type Provider struct {
	cfg    Config
	name   string
	client sdk.Client
}

var (
	_ llm.Provider      = (*Provider)(nil)
	_ llm.AuthValidator = (*Provider)(nil)
)

// New returns a provider for cfg. Nothing is read from the environment: the
// caller resolves keys, so a stray ANTHROPIC_* variable never overrides them.
func New(cfg Config) *Provider {
	p := &Provider{cfg: cfg, name: cfg.Name}
	if p.name == "" {
		p.name = DefaultName
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	}
	keys := make([]string, 0, len(cfg.Headers))
	for k := range cfg.Headers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		opts = append(opts, option.WithHeader(k, cfg.Headers[k]))
	}
	p.client = sdk.NewClient(opts...)
	return p
}

// Name returns the provider name stamped on replies.
func (p *Provider) Name() string { return p.name }

// auth returns the request option carrying the credentials: a bearer token
// from Config.Token, else the API key, else an llm.AuthMissing error.
func (p *Provider) auth(ctx context.Context) (option.RequestOption, error) {
	if p.cfg.Token != nil {
		tok, err := p.cfg.Token(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, llm.FromTransport(ctx, p.name, err)
			}
			return nil, &llm.Error{Kind: llm.KindAuth, Provider: p.name, Message: "token source: " + err.Error(), Err: err,
				Hint: "the OAuth token could not be obtained; log in again"}
		}
		if tok == "" {
			return nil, llm.AuthMissing(p.name, envVar)
		}
		return option.Join(option.WithHeaderDel("x-api-key"), option.WithHeader("Authorization", "Bearer "+tok)), nil
	}
	if p.cfg.APIKey == "" {
		return nil, llm.AuthMissing(p.name, envVar)
	}
	return option.Join(option.WithHeaderDel("Authorization"), option.WithHeader("x-api-key", p.cfg.APIKey)), nil
}

// Stream sends req and yields the reply as it arrives (see llm.Provider).
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	return func(yield func(llm.Delta, error) bool) {
		authOpt, err := p.auth(ctx)
		if err != nil {
			yield(llm.Delta{}, err)
			return
		}
		msgs := llm.PrepareHistory(req.Messages, p.name, req.Model, llm.DowngradeDrop)
		params, err := buildParams(req, msgs)
		if err != nil {
			yield(llm.Delta{}, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: err.Error(), Err: err})
			return
		}
		var resp *http.Response
		err = p.client.Post(ctx, "v1/messages", params, &resp, authOpt, option.WithJSONSet("stream", true))
		if err != nil {
			yield(llm.Delta{}, p.requestError(ctx, err))
			return
		}
		defer resp.Body.Close()
		s := newStream(p.name, req, resp)
		s.run(ctx, yield)
	}
}

// ValidateAuth checks the credentials with a cheap call: list one model.
func (p *Provider) ValidateAuth(ctx context.Context) error {
	authOpt, err := p.auth(ctx)
	if err != nil {
		return err
	}
	_, err = p.client.Models.List(ctx, sdk.ModelListParams{Limit: param.NewOpt[int64](1)}, authOpt)
	if err != nil {
		return p.requestError(ctx, err)
	}
	return nil
}

// requestError classifies a failure of the request itself: an error status,
// or a transport error before any response.
func (p *Provider) requestError(ctx context.Context, err error) *llm.Error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) && apiErr.StatusCode != 0 && ctx.Err() == nil {
		var header http.Header
		body := []byte(apiErr.RawJSON())
		if r := apiErr.Response; r != nil {
			header = r.Header
			if r.Body != nil {
				if b, rerr := io.ReadAll(r.Body); rerr == nil && len(b) > 0 {
					body = b
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
		}
		e := llm.FromHTTP(p.name, apiErr.StatusCode, header, body).WithAuthHint(envVar)
		e.Err = err
		return e
	}
	e := llm.FromTransport(ctx, p.name, err)
	if e.Kind == llm.KindStreamCut {
		// The connection closed before any response: nothing was streamed.
		e.Kind = llm.KindNetwork
	}
	return e
}
