package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The environment variables [SearchFromEnv] reads, in order of preference.
const (
	// EnvSearXNG is the base URL of a SearXNG instance whose JSON format
	// is enabled (search.formats in its settings.yml).
	EnvSearXNG = "REIN_SEARXNG_URL"
	// EnvBraveKey is a Brave Search API subscription token.
	EnvBraveKey = "BRAVE_SEARCH_API_KEY"
	// EnvTavilyKey is a Tavily API key.
	EnvTavilyKey = "TAVILY_API_KEY"
)

// Default endpoints of the search APIs.
const (
	// BraveEndpoint is the Brave Search API's web search.
	BraveEndpoint = "https://api.search.brave.com/res/v1/web/search"
	// TavilyEndpoint is the Tavily API's search.
	TavilyEndpoint = "https://api.tavily.com/search"
)

// searchTimeout bounds one search request when the client has no timeout.
const searchTimeout = 30 * time.Second

// searchBodyMax caps the reply a search backend may send.
const searchBodyMax = 4 << 20

// NotConfiguredText is what web_search answers when no backend is set: it
// names the settings that enable one (SPEC TOOL-3).
const NotConfiguredText = "web search is not configured: the user can enable it by setting " +
	EnvSearXNG + " (a SearXNG instance with the JSON format on), " + EnvBraveKey + " or " + EnvTavilyKey +
	" in rein's environment. Meanwhile use web_fetch on URLs you know, or proceed without searching"

// SearchFromEnv returns the web_search backend the environment configures
// (SPEC TOOL-3) and its name: SearXNG when [EnvSearXNG] is set, else Brave
// when [EnvBraveKey] is, else Tavily when [EnvTavilyKey] is; nil and ""
// when none is. A malformed setting is an error naming it. client may be
// nil (a client with a 30 s timeout is used).
func SearchFromEnv(getenv func(string) string, client *http.Client) (SearchBackend, string, error) {
	if v := strings.TrimSpace(getenv(EnvSearXNG)); v != "" {
		s, err := NewSearXNG(v, client)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", EnvSearXNG, err)
		}
		return s, "searxng", nil
	}
	if k := strings.TrimSpace(getenv(EnvBraveKey)); k != "" {
		return &BraveSearch{Key: k, Client: client}, "brave", nil
	}
	if k := strings.TrimSpace(getenv(EnvTavilyKey)); k != "" {
		return &Tavily{Key: k, Client: client}, "tavily", nil
	}
	return nil, "", nil
}

// SearXNG searches through a SearXNG instance's JSON API
// (GET {URL}/search?q=…&format=json).
type SearXNG struct {
	// URL is the instance's base URL (its /search is appended).
	URL    string
	Client *http.Client
}

// NewSearXNG returns a SearXNG backend for the instance at base, which must
// be an http or https URL.
func NewSearXNG(base string, client *http.Client) (*SearXNG, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL of a SearXNG instance", base)
	}
	return &SearXNG{URL: base, Client: client}, nil
}

// Search runs query on the instance. SearXNG pages by its own count, so the
// first page is cut to n.
func (s *SearXNG) Search(ctx context.Context, query string, n int) ([]Hit, error) {
	u, err := url.Parse(strings.TrimSuffix(s.URL, "/") + "/search")
	if err != nil {
		return nil, fmt.Errorf("searxng: %w", err)
	}
	u.RawQuery = url.Values{"q": {query}, "format": {"json"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("searxng: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	var out struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := doSearch(s.Client, req, "searxng", &out); err != nil {
		if strings.Contains(err.Error(), "HTTP 403") {
			err = fmt.Errorf("%w (is json in search.formats of the instance's settings.yml?)", err)
		}
		return nil, err
	}
	hits := make([]Hit, 0, min(n, len(out.Results)))
	for _, r := range out.Results {
		if len(hits) == n {
			break
		}
		hits = append(hits, Hit{Title: r.Title, URL: r.URL, Snippet: r.Content})
	}
	return hits, nil
}

// BraveSearch searches with the Brave Search API (GET web/search, the key
// in X-Subscription-Token).
type BraveSearch struct {
	Key string
	// Endpoint defaults to [BraveEndpoint].
	Endpoint string
	Client   *http.Client
}

// Search runs query, asking for n results (the API gives at most 20).
func (b *BraveSearch) Search(ctx context.Context, query string, n int) ([]Hit, error) {
	u, err := url.Parse(orDefault(b.Endpoint, BraveEndpoint))
	if err != nil {
		return nil, fmt.Errorf("brave: %w", err)
	}
	u.RawQuery = url.Values{"q": {query}, "count": {strconv.Itoa(min(max(n, 1), 20))}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("brave: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Subscription-Token", b.Key)
	var out struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := doSearch(b.Client, req, "brave", &out); err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, len(out.Web.Results))
	for _, r := range out.Web.Results {
		hits = append(hits, Hit{Title: r.Title, URL: r.URL, Snippet: stripTags(r.Description)})
	}
	return hits, nil
}

// Tavily searches with the Tavily API (POST /search with a JSON body, the
// key as a bearer token).
type Tavily struct {
	Key string
	// Endpoint defaults to [TavilyEndpoint].
	Endpoint string
	Client   *http.Client
}

// Search runs query, asking for n results.
func (t *Tavily) Search(ctx context.Context, query string, n int) ([]Hit, error) {
	body, err := json.Marshal(map[string]any{"query": query, "max_results": max(n, 1)})
	if err != nil {
		return nil, fmt.Errorf("tavily: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, orDefault(t.Endpoint, TavilyEndpoint), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("tavily: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.Key)
	var out struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := doSearch(t.Client, req, "tavily", &out); err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, len(out.Results))
	for _, r := range out.Results {
		hits = append(hits, Hit{Title: r.Title, URL: r.URL, Snippet: r.Content})
	}
	return hits, nil
}

// orDefault returns v, or def when v is empty.
func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// doSearch sends req and decodes a 2xx JSON reply into out. Errors name
// the backend and, for a refused request, the status and the start of the
// reply (never the request: it holds the key).
func doSearch(c *http.Client, req *http.Request, name string, out any) error {
	if c == nil {
		c = &http.Client{Timeout: searchTimeout}
	}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL may carry the query; the backend name says enough
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, searchBodyMax))
	if err != nil {
		return fmt.Errorf("%s: reading the reply: %w", name, err)
	}
	if resp.StatusCode/100 != 2 {
		msg := collapse(string(body))
		if len(msg) > 200 {
			msg, _ = cutText(msg, 200)
		}
		hint := ""
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			hint = " (check the API key or the instance's access settings)"
		case http.StatusTooManyRequests:
			hint = " (rate limited: wait before searching again)"
		}
		return fmt.Errorf("%s: HTTP %d%s: %s", name, resp.StatusCode, hint, msg)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s: the reply is not the expected JSON: %w", name, err)
	}
	return nil
}

// stripTags removes the <strong> and similar markup Brave puts in
// descriptions.
func stripTags(s string) string {
	if !strings.ContainsRune(s, '<') {
		return s
	}
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}
