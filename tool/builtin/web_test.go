package builtin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func webServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>Docs</title><script>evil()</script></head><body>
<nav><a href="/">Home</a></nav><h1>Install</h1><p>Run <code>make</code>, see <a href="/more">more</a>.</p></body></html>`)
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		w.Write([]byte("<p>caf\xe9</p>"))
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "  raw <b>text</b>\n")
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.api+json")
		fmt.Fprint(w, `{"a":1}`)
	})
	mux.HandleFunc("/image", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	mux.HandleFunc("/untyped", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil
		fmt.Fprint(w, "<!DOCTYPE html><p>sniffed</p>")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("0123456789", 30000))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<h1>Not here</h1>")
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/page", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/ftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.com/x", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestWebFetch(t *testing.T) {
	srv := webServer(t)
	wf := NewWebFetch(WebFetchOptions{Client: srv.Client(), MaxText: 1000})
	tests := []struct {
		path    string
		wantErr bool
		subs    []string
	}{
		{"/page", false, []string{"# Docs\nURL: " + srv.URL + "/page\n\n# Install\n\nRun `make`, see [more](" + srv.URL + "/more)."}},
		{"/latin1", false, []string{"café"}},
		{"/plain", false, []string{"  raw <b>text</b>"}},
		{"/json", false, []string{`{"a":1}`}},
		{"/untyped", false, []string{"sniffed"}},
		{"/moved", false, []string{"URL: " + srv.URL + "/page", "# Install"}},
		{"/big", false, []string{"[content cut at 1000 bytes"}},
		{"/image", true, []string{"image/png", "not text"}},
		{"/missing", true, []string{"HTTP 404", "Not here"}},
		{"/loop", true, []string{"stopped after 5 redirects"}},
		{"/ftp", true, []string{"redirect to a ftp: URL refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res := runTool(t, wf, "", map[string]any{"url": srv.URL + tt.path})
			mustContain(t, res, tt.wantErr, tt.subs...)
			if strings.Contains(res.TextOf(), "evil") || strings.Contains(res.TextOf(), "Home") {
				t.Errorf("script or nav kept:\n%s", res.TextOf())
			}
		})
	}
	for _, u := range []string{"file:///etc/passwd", "ftp://x/y", "not a url", "/relative"} {
		mustContain(t, runTool(t, wf, "", map[string]any{"url": u}), true, "http or https")
	}
}

func TestWebFetchTimeout(t *testing.T) {
	srv := webServer(t)
	wf := NewWebFetch(WebFetchOptions{Client: srv.Client(), Timeout: 50 * time.Millisecond})
	mustContain(t, runTool(t, wf, "", map[string]any{"url": srv.URL + "/slow"}), true, "timed out")
}

func TestWebFetchKeepsClientUntouched(t *testing.T) {
	c := &http.Client{}
	NewWebFetch(WebFetchOptions{Client: c})
	if c.CheckRedirect != nil {
		t.Fatal("web_fetch changed the injected client")
	}
}

func TestWebSearch(t *testing.T) {
	mustContain(t, runTool(t, NewWebSearch(nil), "", map[string]any{"query": "go generics"}), true, "web search is not configured", "set")
	var gotN int
	fake := SearchFunc(func(ctx context.Context, q string, n int) ([]Hit, error) {
		gotN = n
		if q == "fail" {
			return nil, errors.New("quota exceeded")
		}
		if q == "none" {
			return nil, nil
		}
		return []Hit{{Title: "Go  Generics", URL: "https://go.dev/doc/tutorial/generics", Snippet: "A tutorial\non generics."}, {Title: "Spec", URL: "https://go.dev/ref/spec"}}, nil
	})
	ws := NewWebSearch(fake)
	res := runTool(t, ws, "", map[string]any{"query": "go generics", "max_results": 50})
	want := "1. Go Generics\n   https://go.dev/doc/tutorial/generics\n   A tutorial on generics.\n2. Spec\n   https://go.dev/ref/spec\n"
	if diff := cmp.Diff(want, res.TextOf()); diff != "" || res.IsError {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if gotN != searchMax {
		t.Errorf("backend asked for %d results, want the cap %d", gotN, searchMax)
	}
	runTool(t, ws, "", map[string]any{"query": "x"})
	if gotN != searchDefault {
		t.Errorf("default %d, want %d", gotN, searchDefault)
	}
	mustContain(t, runTool(t, ws, "", map[string]any{"query": "fail"}), true, "quota exceeded")
	mustContain(t, runTool(t, ws, "", map[string]any{"query": "none"}), false, "No results")
	mustContain(t, runTool(t, ws, "", map[string]any{"query": "  "}), true, "empty")
}

// PERM-2 (issue 8): web_fetch's own client never follows a public name or
// a redirect into this machine or a private network; a URL that names a
// local host itself (the policy asked about it) is fetched.
func TestWebFetchLocalGuard_PERM2(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, "http://localhost:1/x", http.StatusFound)
			return
		}
		fmt.Fprint(w, "local page")
	}))
	defer srv.Close()
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"} {
		t.Setenv(k, "")
	}
	wf := NewWebFetch(WebFetchOptions{})
	r := runTool(t, wf, t.TempDir(), map[string]string{"url": srv.URL + "/"})
	if r.IsError || !strings.Contains(r.TextOf(), "local page") {
		t.Fatalf("literal local URL: %v %s", r.IsError, r.TextOf())
	}
	for _, c := range []struct {
		addr  string
		allow bool
		want  bool
	}{
		{"127.0.0.1:80", false, true}, {"10.1.2.3:443", false, true}, {"169.254.169.254:80", false, true},
		{"[::1]:80", false, true}, {"[::ffff:127.0.0.1]:80", false, true}, {"93.184.216.34:443", false, false},
		{"127.0.0.1:80", true, false},
	} {
		ctx := context.WithValue(context.Background(), localOK{}, c.allow)
		if err := checkDial(ctx, c.addr); (err != nil) != c.want {
			t.Errorf("checkDial(%s, allowed %v) = %v, want refused %v", c.addr, c.allow, err, c.want)
		}
	}
}
