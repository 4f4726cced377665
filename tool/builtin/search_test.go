package builtin

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// searchServer serves h on 127.0.0.1 and fails the test on any request
// that h does not answer itself.
func searchServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// TOOL-3: a SearXNG instance's JSON API (GET /search?q=…&format=json) is a
// web_search backend; its results are cut to what was asked.
func TestTOOL3SearXNG(t *testing.T) {
	srv := searchServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/searx/search" || r.URL.Query().Get("format") != "json" {
			t.Errorf("request %s %s", r.Method, r.URL)
		}
		if q := r.URL.Query().Get("q"); q == "blocked" {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		} else if q != "go generics" {
			t.Errorf("q = %q", q)
		}
		io.WriteString(w, `{"query":"go generics","number_of_results":3,"results":[
			{"url":"https://go.dev/doc/tutorial/generics","title":"Tutorial: Getting started with generics","content":"This tutorial introduces the basics.","engine":"duckduckgo","score":2.5},
			{"url":"https://go.dev/ref/spec","title":"The Go Programming Language Specification","content":"Type parameters…"},
			{"url":"https://example.com/3","title":"Third","content":""}],
			"answers":[],"suggestions":["go generics tutorial"],"infoboxes":[],"unresponsive_engines":[]}`)
	})
	backend, name, err := SearchFromEnv(func(k string) string {
		return map[string]string{EnvSearXNG: srv.URL + "/searx/", EnvBraveKey: "ignored"}[k]
	}, srv.Client())
	if err != nil || name != "searxng" {
		t.Fatalf("SearchFromEnv: %q, %v", name, err)
	}
	ws := NewWebSearch(backend)
	res := runTool(t, ws, "", map[string]any{"query": "go generics", "max_results": 2})
	want := "1. Tutorial: Getting started with generics\n   https://go.dev/doc/tutorial/generics\n   This tutorial introduces the basics.\n" +
		"2. The Go Programming Language Specification\n   https://go.dev/ref/spec\n   Type parameters…\n"
	if diff := cmp.Diff(want, res.TextOf()); diff != "" || res.IsError {
		t.Errorf("(-want +got):\n%s", diff)
	}
	mustContain(t, runTool(t, ws, "", map[string]any{"query": "blocked"}), true, "searxng: HTTP 403", "search.formats")
}

// TOOL-3: the Brave Search API (key in X-Subscription-Token, results under
// web.results with HTML-marked descriptions) is a web_search backend.
func TestTOOL3BraveSearch(t *testing.T) {
	srv := searchServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != "brave-key" {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID","status":401}}`)
			return
		}
		if r.URL.Path != "/res/v1/web/search" || r.URL.Query().Get("q") != "rust async" || r.URL.Query().Get("count") != "3" {
			t.Errorf("request %s", r.URL)
		}
		io.WriteString(w, `{"type":"search","query":{"original":"rust async"},"web":{"type":"search","results":[
			{"title":"Asynchronous Programming in Rust","url":"https://rust-lang.github.io/async-book/","description":"<strong>Async</strong> book.","type":"search_result"}]}}`)
	})
	env := map[string]string{EnvBraveKey: "brave-key", EnvTavilyKey: "ignored"}
	backend, name, err := SearchFromEnv(func(k string) string { return env[k] }, srv.Client())
	if err != nil || name != "brave" {
		t.Fatalf("SearchFromEnv: %q, %v", name, err)
	}
	backend.(*BraveSearch).Endpoint = srv.URL + "/res/v1/web/search"
	res := runTool(t, NewWebSearch(backend), "", map[string]any{"query": "rust async", "max_results": 3})
	want := "1. Asynchronous Programming in Rust\n   https://rust-lang.github.io/async-book/\n   Async book.\n"
	if diff := cmp.Diff(want, res.TextOf()); diff != "" || res.IsError {
		t.Errorf("(-want +got):\n%s", diff)
	}
	bad := &BraveSearch{Key: "wrong", Endpoint: srv.URL + "/res/v1/web/search", Client: srv.Client()}
	res = runTool(t, NewWebSearch(bad), "", map[string]any{"query": "rust async"})
	mustContain(t, res, true, "brave: HTTP 401", "check the API key", "SUBSCRIPTION_TOKEN_INVALID")
	if strings.Contains(res.TextOf(), "wrong") {
		t.Errorf("the error shows the key: %s", res.TextOf())
	}
}

// TOOL-3: the Tavily API (POST JSON, bearer key, results with content) is a
// web_search backend.
func TestTOOL3Tavily(t *testing.T) {
	srv := searchServer(t, func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Query      string `json:"query"`
			MaxResults int    `json:"max_results"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.Method != http.MethodPost ||
			r.Header.Get("Authorization") != "Bearer tvly-key" || body.Query != "sqlite wal" || body.MaxResults != 8 {
			t.Errorf("request %s %s %q %+v %v", r.Method, r.URL, r.Header.Get("Authorization"), body, err)
		}
		io.WriteString(w, `{"query":"sqlite wal","answer":null,"images":[],"results":[
			{"title":"Write-Ahead Logging","url":"https://sqlite.org/wal.html","content":"The default method by which SQLite implements atomic commit.","score":0.9}],
			"response_time":1.2}`)
	})
	backend, name, err := SearchFromEnv(func(k string) string { return map[string]string{EnvTavilyKey: "tvly-key"}[k] }, srv.Client())
	if err != nil || name != "tavily" {
		t.Fatalf("SearchFromEnv: %q, %v", name, err)
	}
	backend.(*Tavily).Endpoint = srv.URL + "/search"
	res := runTool(t, NewWebSearch(backend), "", map[string]any{"query": "sqlite wal"})
	mustContain(t, res, false, "1. Write-Ahead Logging\n   https://sqlite.org/wal.html\n   The default method")
}

// TOOL-3: with nothing configured there is no backend, and the tool says
// how to configure one; a malformed URL is an error naming the setting.
func TestTOOL3SearchNotConfigured(t *testing.T) {
	b, name, err := SearchFromEnv(func(string) string { return "" }, nil)
	if b != nil || name != "" || err != nil {
		t.Fatalf("empty environment: %v %q %v", b, name, err)
	}
	mustContain(t, runTool(t, NewWebSearch(nil), "", map[string]any{"query": "x"}), true,
		"not configured", EnvSearXNG, EnvBraveKey, EnvTavilyKey)
	_, _, err = SearchFromEnv(func(k string) string { return map[string]string{EnvSearXNG: "searx.local:8080"}[k] }, nil)
	if err == nil || !strings.Contains(err.Error(), EnvSearXNG) {
		t.Errorf("malformed URL: %v", err)
	}
	srv := searchServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>not json</html>") })
	s, _ := NewSearXNG(srv.URL, srv.Client())
	mustContain(t, runTool(t, NewWebSearch(s), "", map[string]any{"query": "x"}), true, "searxng: the reply is not the expected JSON")
}
