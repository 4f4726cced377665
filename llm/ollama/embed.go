package ollama

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/reinhq/rein/internal/jsonevents"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/vendorhttp"
)

// DefaultBaseURL is where Ollama listens unless told otherwise.
const DefaultBaseURL = "http://127.0.0.1:11434"

// Limits of one /api/embed request. Ollama sets none; these keep a request
// short enough to report progress and to retry cheaply.
const (
	MaxEmbedBatch = 256
	MaxEmbedBytes = 512 << 10
)

const (
	// maxReplyBody bounds a reply: 256 texts of 8,192 dimensions as JSON
	// numbers fit with room to spare.
	maxReplyBody = 256 << 20
)

// Config configures an [Embedder]. The zero value talks to Ollama on
// 127.0.0.1:11434.
type Config struct {
	// BaseURL is Ollama's address in any form OLLAMA_HOST takes; a trailing
	// "/v1" (the OpenAI-compatible root) is dropped. DefaultBaseURL when
	// empty.
	BaseURL string
	// HTTPClient sends the requests; nil uses a client without timeouts (the
	// caller's context bounds a call).
	HTTPClient *http.Client
	// Name is the provider name stamped on errors; "ollama" when empty.
	Name string
	// Headers are extra HTTP headers sent with every request (a proxy's
	// auth).
	Headers map[string]string
}

// Embedder embeds texts with a model served by Ollama. It implements
// [llm.Embedder] and [llm.EmbedLimiter] and is safe for concurrent use.
// An empty text is sent as a single space, as the other adapters do.
type Embedder struct {
	name    string
	url     string // {base}/api/embed
	base    string
	hc      *http.Client
	headers map[string]string
	model   string
	dims    int
	initErr error
}

var (
	_ llm.Embedder     = (*Embedder)(nil)
	_ llm.EmbedLimiter = (*Embedder)(nil)
)

// NewEmbedder returns an embedder for model ("nomic-embed-text").
// dimensions > 0 asks for shorter vectors (Ollama's "dimensions", honoured
// by models that support it); 0 takes the model's own size. It makes no
// request; a BaseURL that does not parse fails every call.
func NewEmbedder(cfg Config, model string, dimensions int) *Embedder {
	e := &Embedder{name: cmp.Or(cfg.Name, "ollama"), hc: cfg.HTTPClient, headers: cfg.Headers,
		model: model, dims: max(dimensions, 0)}
	if e.hc == nil {
		e.hc = &http.Client{}
	}
	e.base, e.initErr = ParseHost(cfg.BaseURL)
	e.url = e.base + "/api/embed"
	return e
}

// ParseHost turns an OLLAMA_HOST value into a base URL, as Ollama's own
// client does: no scheme means http and port 11434 ("gpu-box" →
// http://gpu-box:11434), an explicit http:// or https:// without a port
// means 80 or 443, an empty or unspecified host (":11434", "0.0.0.0")
// means 127.0.0.1. A trailing "/" or "/v1" is dropped.
func ParseHost(host string) (string, error) {
	s := strings.TrimSpace(host)
	if s == "" {
		return DefaultBaseURL, nil
	}
	scheme, hostport, ok := strings.Cut(s, "://")
	port := "11434"
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		port = "80"
	case scheme == "https":
		port = "443"
	default:
		return "", fmt.Errorf("ollama host %q: scheme %q is not http or https", host, scheme)
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		h, p = strings.Trim(hostport, "[]"), port
	}
	if n, err := strconv.Atoi(p); err != nil || n <= 0 || n > 65535 {
		return "", fmt.Errorf("ollama host %q: bad port %q", host, p)
	}
	if ip := net.ParseIP(h); h == "" || ip != nil && ip.IsUnspecified() {
		h = "127.0.0.1"
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(h, p), Path: "/" + path}
	if _, err := url.Parse(u.String()); err != nil {
		return "", fmt.Errorf("ollama host %q: %w", host, err)
	}
	out := strings.TrimSuffix(strings.TrimRight(u.String(), "/"), "/v1")
	return strings.TrimRight(out, "/"), nil
}

// EmbedLimits returns the limits of one request.
func (e *Embedder) EmbedLimits() llm.EmbedLimits {
	return llm.EmbedLimits{MaxTexts: MaxEmbedBatch, MaxBytes: MaxEmbedBytes}
}

// Embed returns one vector per text, in order (see [llm.Embedder]), in as
// many requests as the limits need.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	switch {
	case e.initErr != nil:
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: e.name, Message: e.initErr.Error(), Err: e.initErr,
			Hint: "set OLLAMA_HOST (or the profile's base_url) to host:port, e.g. 127.0.0.1:11434"}
	case e.model == "":
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: e.name,
			Message: "no embedding model named", Hint: "name one, e.g. ollama/nomic-embed-text"}
	}
	return llm.EmbedBatched(ctx, e.name, texts, e.EmbedLimits(), e.embed)
}

// embedRequest is the body of POST /api/embed.
type embedRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

// embed sends one request.
func (e *Embedder) embed(ctx context.Context, texts []string) ([][]float32, error) {
	in := embedRequest{Model: e.model, Input: make([]string, len(texts)), Dimensions: e.dims}
	for i, t := range texts {
		in.Input[i] = cmp.Or(t, " ")
	}
	body, err := json.Marshal(in)
	if err != nil {
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: e.name, Message: err.Error(), Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: e.name, Message: err.Error(), Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	for _, k := range slices.Sorted(maps.Keys(e.headers)) {
		req.Header.Set(k, e.headers[k])
	}
	res, err := e.hc.Do(req)
	if err != nil {
		return nil, e.transportError(ctx, err)
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		le := vendorhttp.FromResponse(e.name, res)
		if le.Kind == llm.KindNotFound {
			le.Hint = fmt.Sprintf("pull the model first: ollama pull %s", e.model)
		}
		return nil, le
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, maxReplyBody+1))
	if err != nil {
		return nil, e.transportError(ctx, err)
	}
	if len(b) > maxReplyBody {
		return nil, &llm.Error{Kind: llm.KindMalformed, Provider: e.name,
			Message: fmt.Sprintf("embedding reply larger than %d MiB", maxReplyBody>>20)}
	}
	vecs, err := decodeResponse(b)
	if err != nil {
		return nil, &llm.Error{Kind: llm.KindMalformed, Provider: e.name, Message: err.Error(), Err: err}
	}
	if err := llm.CheckEmbeddings(e.name, len(texts), e.dims, vecs); err != nil {
		return nil, err
	}
	return vecs, nil
}

// decodeResponse reads the body of a successful /api/embed reply.
func decodeResponse(body []byte) ([][]float32, error) {
	var out struct {
		Embeddings *[][]float32 `json:"embeddings"`
		Error      string       `json:"error"`
	}
	if err := json.Unmarshal(jsonevents.TrimBOM(body), &out); err != nil {
		return nil, fmt.Errorf("embed reply: %w", err)
	}
	switch {
	case out.Error != "":
		return nil, fmt.Errorf("embed reply: %s", out.Error)
	case out.Embeddings == nil:
		return nil, errors.New(`embed reply: no "embeddings" (is this Ollama 0.3 or later?)`)
	}
	return *out.Embeddings, nil
}

// transportError classifies a failed round trip, with a hint when nothing
// listens at the address.
func (e *Embedder) transportError(ctx context.Context, err error) *llm.Error {
	le := vendorhttp.FromRoundTrip(ctx, e.name, err)
	if errors.Is(err, syscall.ECONNREFUSED) {
		le.Hint = fmt.Sprintf("is Ollama running at %s? start it with `ollama serve` (or set OLLAMA_HOST)", e.base)
	}
	return le
}
