package openai

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/jsonevents"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/vendorhttp"
)

// DefaultBaseURL is OpenAI's API root; [Config.BaseURL] replaces it.
const DefaultBaseURL = "https://api.openai.com/v1"

const (
	// envKey names the variable a missing or rejected key points to.
	envKey = "OPENAI_API_KEY"
	// maxCacheKey is the longest prompt_cache_key OpenAI accepts.
	maxCacheKey = 64
	// toolErrorPrefix marks a failed tool result: neither API has an is_error
	// field, so the model learns it from the text.
	toolErrorPrefix = "[error] "
)

// Config configures a [Chat] or [Responses] provider. The zero value talks to
// OpenAI and fails with an auth error until a key or Token is set.
type Config struct {
	// APIKey is sent as a Bearer token.
	APIKey string
	// BaseURL is the API root, "https://api.openai.com/v1" by default; point it
	// at any OpenAI-compatible server ("http://localhost:11434/v1" for Ollama).
	BaseURL string
	// HTTPClient sends the requests; nil uses http.DefaultClient, which has
	// no timeouts (the caller's context bounds a call). It is copied, never
	// modified: the copy refuses redirects to another host
	// ([vendorhttp.GuardRedirects]).
	HTTPClient *http.Client
	// Name is the provider name stamped on replies and errors, "openai" by
	// default; an OpenAI-compatible endpoint sets its own ("ollama"). OpenAI-only
	// request fields (prompt_cache_key, max_completion_tokens) are sent only
	// when Name is "openai".
	Name string
	// Token, when set, is called before every request for a bearer token and
	// takes precedence over APIKey; it refreshes expired tokens itself.
	Token func(ctx context.Context) (string, error)
	// Headers are extra HTTP headers sent with every request, set in the
	// order of their names after Content-Type, Accept and User-Agent, which
	// they may replace. An Authorization header among them is sent instead
	// of the APIKey's (an APIKey must still be set); Token's wins over it.
	Headers map[string]string
	// KeyEnv names the variable that holds the key, for the error a missing
	// or rejected key gets; "OPENAI_API_KEY" by default.
	KeyEnv string
}

// userAgent is sent with every request; Config.Headers may replace it.
const userAgent = "rein (openai adapter)"

// client is what both APIs share: the endpoint, the HTTP client, auth and
// error mapping.
type client struct {
	cfg  Config
	name string
	// openAI reports whether the endpoint is OpenAI itself (Name "openai").
	openAI bool
	// base is the API root, its path ending in "/"; the paths of the
	// endpoints resolve against it. baseErr is why BaseURL did not parse.
	base    *url.URL
	baseErr error
	hc      *http.Client
	// headers are Config.Headers' names, sorted, so they are set in a fixed
	// order; explicitAuth reports whether one of them is Authorization.
	headers      []string
	explicitAuth bool
}

// keyEnv names the variable the key comes from, for error hints.
func (c *client) keyEnv() string {
	if c.cfg.KeyEnv != "" {
		return c.cfg.KeyEnv
	}
	return envKey
}

// newClient returns the client for cfg. Nothing of the environment is read:
// no OPENAI_* variable leaks into a configured provider.
func newClient(cfg Config) *client {
	c := &client{cfg: cfg, name: cmp.Or(cfg.Name, "openai"), hc: vendorhttp.GuardRedirects(cfg.HTTPClient)}
	c.openAI = c.name == "openai"
	base := cmp.Or(strings.TrimRight(cfg.BaseURL, "/"), DefaultBaseURL)
	if c.base, c.baseErr = url.Parse(base + "/"); c.baseErr != nil {
		c.baseErr = fmt.Errorf("base URL: %w", c.baseErr)
	} else if c.base.Path != "" && !strings.HasSuffix(c.base.Path, "/") {
		c.base.Path += "/" // the "/" went into a query or fragment
	}
	c.headers = slices.Sorted(maps.Keys(cfg.Headers))
	for _, k := range c.headers {
		if strings.EqualFold(k, "Authorization") {
			c.explicitAuth = true
		}
	}
	return c
}

// bearer returns the token to send as "Authorization: Bearer …" (none when
// empty), or the error to report before any request is made: the Token
// source's token, else the API key. Without either the call fails as
// unauthenticated.
func (c *client) bearer(ctx context.Context) (string, error) {
	if c.cfg.Token != nil {
		tok, err := c.cfg.Token(ctx)
		if err != nil {
			if e, ok := llm.AsError(err); ok {
				return "", e
			}
			if ctx.Err() != nil {
				return "", llm.FromTransport(ctx, c.name, err)
			}
			return "", &llm.Error{Kind: llm.KindAuth, Provider: c.name, Message: "cannot get a token: " + err.Error(),
				Err: err, Hint: "sign in again or set " + c.keyEnv()}
		}
		return tok, nil
	}
	if c.cfg.APIKey == "" {
		return "", llm.AuthMissing(c.name, c.keyEnv())
	}
	if c.explicitAuth {
		// An Authorization header of Config.Headers stands instead of the key.
		return "", nil
	}
	return c.cfg.APIKey, nil
}

// do sends one request to path under the API root — body, when not nil,
// encoded as JSON — and returns the reply, its body unread, when its status
// is below 400. Every call is one round trip: [llm.Retrying] decides what to
// repeat (SPEC PROV-7). An error reply becomes an *llm.Error with the
// vendor's status, headers and body (up to vendorhttp.MaxErrorBody), so vendorhttp.FromHTTP
// sees Retry-After and non-JSON bodies alike.
func (c *client) do(ctx context.Context, method, path string, body any) (*http.Response, error) {
	tok, err := c.bearer(ctx)
	if err != nil {
		return nil, err
	}
	if c.baseErr != nil {
		return nil, c.transportError(ctx, c.baseErr)
	}
	u, err := c.base.Parse(path)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	var rd io.Reader
	if body != nil {
		b, err := encodeJSON(body)
		if err != nil {
			return nil, c.transportError(ctx, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	for _, k := range c.headers {
		req.Header.Set(k, c.cfg.Headers[k])
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return nil, vendorhttp.FromRoundTrip(ctx, c.name, err)
	}
	if ctx.Err() != nil {
		_ = res.Body.Close()
		return nil, llm.FromTransport(ctx, c.name, ctx.Err())
	}
	if res.StatusCode >= 400 {
		return nil, vendorhttp.FromResponse(c.name, res).WithAuthHint(c.keyEnv())
	}
	return res, nil
}

// encodeJSON encodes v as the request bodies were always encoded: compact,
// fields in declaration order, '<', '>' and '&' left as they are.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// open sends a streamed request (body has "stream": true) to path and
// returns the raw response, its body unread.
func (c *client) open(ctx context.Context, path string, body any) (*http.Response, error) {
	res, err := c.do(ctx, http.MethodPost, path, body)
	if err != nil {
		return nil, err
	}
	if res.Body == nil {
		return nil, &llm.Error{Kind: llm.KindUnknown, Provider: c.name, Message: "no response"}
	}
	return res, nil
}

// transportError classifies an error met before or while reading a reply.
func (c *client) transportError(ctx context.Context, err error) error {
	if e, ok := llm.AsError(err); ok {
		return e
	}
	e := llm.FromTransport(ctx, c.name, err)
	if e.Provider == "" {
		e.Provider = c.name
	}
	return e
}

// validateAuth lists the models (GET {BaseURL}/models): a cheap call that
// needs a valid key. Any reply below 400 will do, whatever its body.
func (c *client) validateAuth(ctx context.Context) error {
	res, err := c.do(ctx, http.MethodGet, "models", nil)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return c.transportError(ctx, err)
	}
	return nil
}

// errStopped ends an event loop whose consumer stopped iterating.
var errStopped = errors.New("openai: consumer stopped")

// events reads res's server-sent events and hands each to handle until handle
// reports the stream's end (done) or fails. A body that ends first returns
// done false; a read failure is classified. The shared reader skips a
// byte-order mark and keep-alive events with empty data (SPEC PROV-2).
func (c *client) events(ctx context.Context, res *http.Response, handle func(typ string, data []byte) (bool, error)) (bool, error) {
	dec := jsonevents.NewReader(res.Body)
	for dec.Next() {
		done, err := handle(dec.Type(), dec.Data())
		if err != nil || done {
			return done, err
		}
	}
	if err := dec.Err(); err != nil {
		return false, c.transportError(ctx, err)
	}
	if ctx.Err() != nil {
		return false, llm.FromTransport(ctx, c.name, ctx.Err())
	}
	return false, nil
}

// isJSON reports whether res is a plain JSON reply rather than a stream: some
// OpenAI-compatible servers ignore "stream": true.
func isJSON(res *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	return mt == "application/json"
}

// readAll reads a whole non-streamed reply, without a byte-order mark.
func (c *client) readAll(ctx context.Context, res *http.Response) ([]byte, error) {
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	return jsonevents.TrimBOM(b), nil
}

// malformed classifies data that does not parse.
func (c *client) malformed(err error) *llm.Error { return llm.Malformed(c.name, err) }

// streamError classifies an error reported inside a stream: a Chat chunk
// {"error": {...}} or a Responses error / response.failed event. code and
// typ are the vendor's code and error type when it gives them; the code
// decides, the type where the code says nothing (OpenAI's "type" is
// sometimes only a sub-kind, "tokens" for a rate limit). The status they
// stand for is what vendorhttp.FromHTTP classifies, with the vendor's message kept:
// insufficient_quota is a used-up quota (not retried), rate_limit_exceeded a
// rate limit, server_error a retryable server error, context_length_exceeded
// a context overflow, invalid_request / invalid_prompt a bad request.
func (c *client) streamError(code, typ, message string, raw []byte) *llm.Error {
	status, ok := streamErrorStatus[code]
	if !ok {
		if status, ok = streamErrorStatus[typ]; !ok {
			status = http.StatusInternalServerError
		}
	}
	body, _ := json.Marshal(map[string]map[string]string{"error": {"message": message, "code": code, "type": typ}})
	e := vendorhttp.FromHTTP(c.name, status, nil, body).WithAuthHint(c.keyEnv())
	e.Status = 0 // no HTTP status was received: the stream itself failed
	if message == "" {
		e.Message = strings.TrimSpace(string(raw))
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(code + " " + typ)
	}
	return e
}

// streamErrorStatus is the HTTP status OpenAI (and the servers that copy its
// errors) answer an error code or type with.
var streamErrorStatus = map[string]int{
	"insufficient_quota":      http.StatusTooManyRequests, // with this code: llm.KindQuota
	"rate_limit_exceeded":     http.StatusTooManyRequests,
	"rate_limit_error":        http.StatusTooManyRequests,
	"429":                     http.StatusTooManyRequests,
	"server_error":            http.StatusInternalServerError,
	"api_error":               http.StatusInternalServerError,
	"500":                     http.StatusInternalServerError,
	"server_is_overloaded":    http.StatusServiceUnavailable,
	"slow_down":               http.StatusServiceUnavailable,
	"overloaded_error":        http.StatusServiceUnavailable,
	"503":                     http.StatusServiceUnavailable,
	"context_length_exceeded": http.StatusBadRequest, // with this code: llm.KindContextOverflow
	"invalid_prompt":          http.StatusBadRequest,
	"invalid_request":         http.StatusBadRequest,
	"invalid_request_error":   http.StatusBadRequest,
	"400":                     http.StatusBadRequest,
	"invalid_api_key":         http.StatusUnauthorized,
	"authentication_error":    http.StatusUnauthorized,
	"401":                     http.StatusUnauthorized,
	"permission_error":        http.StatusForbidden,
	"403":                     http.StatusForbidden,
	"model_not_found":         http.StatusNotFound,
	"not_found_error":         http.StatusNotFound,
	"404":                     http.StatusNotFound,
}

// hashCacheKey returns key as OpenAI's prompt_cache_key: unchanged up to 64
// characters, else its hex SHA-256 (64 characters) (SPEC PROV-6).
func hashCacheKey(key string) string {
	if len(key) <= maxCacheKey {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])[:maxCacheKey]
}

// effort returns the reasoning effort for t: its Effort, else one derived from
// BudgetTokens.
func effort(t *llm.ThinkingConfig) string {
	switch {
	case t.Effort != "":
		return t.Effort
	case t.BudgetTokens <= 0:
		return "medium"
	case t.BudgetTokens < 4096:
		return "low"
	case t.BudgetTokens < 16384:
		return "medium"
	}
	return "high"
}

// prepare readies the history for provider/model: reasoning of other models
// dropped (PROV-5) and tool-result images moved to a user message (LOOP-8).
func (c *client) prepare(req *llm.Request) []llm.Message {
	return llm.MoveToolResultImages(llm.PrepareHistory(req.Messages, c.name, req.Model, llm.DowngradeDrop))
}

// toolSchema returns a tool's JSON Schema, compacted, or an empty object
// schema.
func toolSchema(s json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if len(bytes.TrimSpace(s)) == 0 || json.Compact(&b, s) != nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return b.Bytes()
}

// toolInput is llm.ToolInput, kept as a name for the stream decoders.
func toolInput(args string) json.RawMessage { return llm.ToolInput(args) }

// toolResultText is a tool result's text as both APIs take it: its text
// blocks joined by newlines, prefixed with "[error] " when it failed.
func toolResultText(r *llm.ToolResult) string {
	var b strings.Builder
	if r.IsError {
		b.WriteString(toolErrorPrefix)
	}
	first := true
	for _, blk := range r.Content {
		if t, ok := blk.(*llm.Text); ok {
			if !first {
				b.WriteByte('\n')
			}
			b.WriteString(t.Text)
			first = false
		}
	}
	return b.String()
}

// imageURL is an image as a data: URL, or its URL.
func imageURL(img *llm.Image) string {
	if len(img.Data) == 0 {
		return img.URL
	}
	mt := img.MediaType
	if mt == "" {
		mt = http.DetectContentType(img.Data)
	}
	return "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
}

// usage converts OpenAI counts, whose prompt includes cached tokens and
// whose output includes reasoning. A vendor whose output excludes reasoning
// (xAI) gives itself away by its total: prompt + output + reasoning rather
// than prompt + output; its reasoning is added to the output then.
func usage(prompt, cached, output, reasoning, total int64) llm.Usage {
	if reasoning > 0 && total == prompt+output+reasoning {
		output += reasoning
	}
	return llm.Usage{InputTokens: max(prompt-cached, 0), CacheReadTokens: cached,
		OutputTokens: output, ReasoningTokens: reasoning}
}
