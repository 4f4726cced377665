package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/reinhq/rein/tool"
	"golang.org/x/net/html/charset"
)

// Defaults of web_fetch.
const (
	fetchMaxText      = 100 << 10 // bytes of text returned
	fetchMaxBody      = 5 << 20   // bytes of body read
	fetchTimeout      = 30 * time.Second
	fetchMaxRedirects = 5
	fetchUserAgent    = "rein-web-fetch/1 (+https://github.com/reinhq/rein)"
)

// WebFetchOptions configures web_fetch. The zero value uses the defaults.
type WebFetchOptions struct {
	// Client sends the requests; nil uses a client that refuses to connect
	// to this machine or a private network unless the URL names such a
	// host itself (the permission policy asks about those). Its redirect
	// policy is wrapped to enforce MaxRedirects, http(s), and no redirect
	// from a public host to a local one.
	Client *http.Client
	// MaxText caps the text returned, in bytes (default 100 KB).
	MaxText int
	// MaxBody caps the bytes read from the response (default 5 MB).
	MaxBody int64
	// Timeout bounds each fetch (default 30 s).
	Timeout time.Duration
	// MaxRedirects is how many redirects are followed (default 5).
	MaxRedirects int
	// UserAgent is sent with every request.
	UserAgent string
}

var fetchSchema = tool.NewStaticSchema[fetchIn](nil)

type fetchIn struct {
	URL string `json:"url"`
}

const fetchDesc = "Fetches an http(s) URL as text, HTML converted to markdown; text content types only, " +
	"cut at 100 KB."

// NewWebFetch returns the web_fetch tool.
func NewWebFetch(opts WebFetchOptions) tool.Tool {
	f := newFetcher(opts)
	return tool.DefineStatic("web_fetch", fetchDesc, metaNetwork, fetchSchema, f.run)
}

type fetcher struct {
	client    *http.Client
	maxText   int
	maxBody   int64
	timeout   time.Duration
	userAgent string
}

func newFetcher(o WebFetchOptions) *fetcher {
	f := &fetcher{maxText: o.MaxText, maxBody: o.MaxBody, timeout: o.Timeout, userAgent: o.UserAgent}
	if f.maxText <= 0 {
		f.maxText = fetchMaxText
	}
	if f.maxBody <= 0 {
		f.maxBody = fetchMaxBody
	}
	if f.timeout <= 0 {
		f.timeout = fetchTimeout
	}
	if f.userAgent == "" {
		f.userAgent = fetchUserAgent
	}
	maxRedirects := o.MaxRedirects
	if maxRedirects <= 0 {
		maxRedirects = fetchMaxRedirects
	}
	c := guardedClient()
	if o.Client != nil {
		cc := *o.Client
		c = &cc
	}
	inner := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirect to a %s: URL refused", req.URL.Scheme)
		}
		if tool.LocalHost(req.URL.Hostname()) && !tool.LocalHost(via[0].URL.Hostname()) {
			return fmt.Errorf("redirect from %s to %s, this machine or a private network, refused", via[0].URL.Hostname(), req.URL.Host)
		}
		if inner != nil {
			return inner(req, via)
		}
		return nil
	}
	f.client = c
	return f
}

func (f *fetcher) run(ctx context.Context, call tool.Call, in fetchIn) (tool.Result, error) {
	u, err := url.Parse(strings.TrimSpace(in.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return tool.Errorf("url must be an absolute http or https URL, got %q", in.URL), nil
	}
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, localOK{}, tool.LocalHost(u.Hostname())), f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return tool.Errorf("bad url %q: %v", in.URL, err), nil
	}
	req.Header.Set("User-Agent", f.userAgent)
	req.Header.Set("Accept", "text/html, text/markdown, text/plain, application/json, */*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return tool.Errorf("fetching %s timed out after %s", u, f.timeout), nil
		}
		return tool.Errorf("fetching %s failed: %v", u, err), nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBody+1))
	if err != nil {
		return tool.Errorf("reading %s failed: %v", u, err), nil
	}
	bodyCut := int64(len(body)) > f.maxBody
	if bodyCut {
		body = body[:f.maxBody]
	}
	final := resp.Request.URL
	ct := resp.Header.Get("Content-Type")
	kind, media := contentKind(ct, body)
	if kind == "" {
		return tool.Errorf("%s has content type %s, which is not text; web_fetch reads HTML and text only", final, media), nil
	}
	title, text, err := f.decode(kind, ct, body, final)
	if err != nil {
		return tool.Errorf("cannot read %s: %v", final, err), nil
	}
	meta := map[string]any{"url": u.String(), "final_url": final.String(), "status": resp.StatusCode, "content_type": media}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		snip, _ := cutText(text, 1000)
		r := tool.Errorf("HTTP %s for %s\n\n%s", resp.Status, final, snip)
		r.Metadata = meta
		return r, nil
	}
	var b strings.Builder
	if title != "" {
		fmt.Fprintf(&b, "# %s\n", title)
	}
	fmt.Fprintf(&b, "URL: %s\n\n", final)
	text, cut := cutText(text, f.maxText)
	b.WriteString(text)
	if cut || bodyCut {
		fmt.Fprintf(&b, "\n\n[content cut at %s; the rest of the page is not shown]", sizeText(int64(len(text))))
	}
	meta["bytes"] = len(body)
	r := tool.Text(b.String())
	r.Metadata = meta
	return r, nil
}

// decode turns a body into UTF-8 text, converting HTML to markdown.
func (f *fetcher) decode(kind, ct string, body []byte, base *url.URL) (string, string, error) {
	r, err := charset.NewReader(bytes.NewReader(body), ct)
	if err != nil {
		r = bytes.NewReader(body)
	}
	if kind == "html" {
		return htmlToMarkdown(r, base)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return "", "", err
	}
	return "", strings.ToValidUTF8(string(b), "\uFFFD"), nil
}

// contentKind classifies a response: "html", "text" or "" (refused), and
// returns its media type. A missing type is sniffed from the body.
func contentKind(ct string, body []byte) (kind, media string) {
	media, _, err := mime.ParseMediaType(ct)
	if err != nil || media == "" {
		media, _, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	media = strings.ToLower(media)
	switch {
	case media == "text/html" || media == "application/xhtml+xml":
		return "html", media
	case strings.HasPrefix(media, "text/"),
		strings.HasSuffix(media, "+json"), strings.HasSuffix(media, "+xml"),
		textTypes[media]:
		return "text", media
	}
	return "", media
}

// textTypes are non-text/* media types web_fetch passes through.
var textTypes = map[string]bool{
	"application/json": true, "application/xml": true, "application/javascript": true,
	"application/x-javascript": true, "application/ecmascript": true, "application/x-yaml": true,
	"application/yaml": true, "application/toml": true, "application/x-sh": true,
	"application/sql": true, "application/graphql": true, "application/x-ndjson": true,
}

// cutText cuts s to at most n bytes on a rune boundary.
func cutText(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// Hit is one web search result.
type Hit struct {
	Title   string
	URL     string
	Snippet string
}

// SearchBackend runs web searches for web_search. Search returns at most n
// hits for query, best first; an error is shown to the model.
type SearchBackend interface {
	Search(ctx context.Context, query string, n int) ([]Hit, error)
}

// SearchFunc adapts a function to [SearchBackend].
type SearchFunc func(ctx context.Context, query string, n int) ([]Hit, error)

// Search calls f.
func (f SearchFunc) Search(ctx context.Context, query string, n int) ([]Hit, error) {
	return f(ctx, query, n)
}

// Limits of web_search.
const (
	searchDefault = 8
	searchMax     = 20
)

var searchSchema = tool.NewStaticSchema[searchIn](func(s *jsonschema.Schema) {
	minimum(prop(s, "max_results"), 1)
})

type searchIn struct {
	Query      string `json:"query"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"default 8, max 20"`
}

const searchDesc = "Searches the web: titles, URLs and snippets. Read a result with web_fetch."

// NewWebSearch returns the web_search tool. With a nil backend every call
// returns an error result saying search is not configured and how to
// configure it ([NotConfiguredText]); [SearchFromEnv] picks a backend.
func NewWebSearch(b SearchBackend) tool.Tool {
	return tool.DefineStatic("web_search", searchDesc, metaNetwork, searchSchema, func(ctx context.Context, call tool.Call, in searchIn) (tool.Result, error) {
		if b == nil {
			return tool.Errorf("%s", NotConfiguredText), nil
		}
		q := strings.TrimSpace(in.Query)
		if q == "" {
			return tool.Errorf("query is empty: give search terms"), nil
		}
		n := in.MaxResults
		if n <= 0 {
			n = searchDefault
		}
		n = min(n, searchMax)
		hits, err := b.Search(ctx, q, n)
		if err != nil {
			return tool.Errorf("web search failed: %v", err), nil
		}
		if len(hits) > n {
			hits = hits[:n]
		}
		return tool.Text(formatHits(q, hits)), nil
	})
}

func formatHits(q string, hits []Hit) string {
	if len(hits) == 0 {
		return fmt.Sprintf("No results for %q.", q)
	}
	var b strings.Builder
	for i, h := range hits {
		fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, collapse(h.Title), h.URL)
		if s := collapse(h.Snippet); s != "" {
			fmt.Fprintf(&b, "   %s\n", s)
		}
	}
	return b.String()
}
