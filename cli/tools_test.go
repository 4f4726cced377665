package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/tool/builtin"
)

// TOOL-3: REIN_SEARXNG_URL in rein's environment gives web_search a
// backend; the model's call reaches the instance (here on 127.0.0.1).
func TestWebSearchFromEnv_TOOL3(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Query().Get("q") + " " + r.URL.Query().Get("format")
		io.WriteString(w, `{"results":[{"url":"https://go.dev/","title":"The Go Programming Language","content":"Build simple, secure, scalable systems."}]}`)
	}))
	defer srv.Close()
	te := newTestEnv(t)
	te.env[builtin.EnvSearXNG] = srv.URL
	s := te.script("m",
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "web_search", `{"query":"golang"}`)}},
		llmtest.Reply{Text: "found it"})
	te.mustRun(ExitOK, "run", "--model", "scripted/m", "--allowed-tools", "web_search", "search")
	if got != "golang json" {
		t.Errorf("the instance got %q, want the query in JSON format", got)
	}
	reqs := s.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if text := (llm.Message{Content: last.ToolResults()[0].Content}).TextOf(); !strings.Contains(text, "https://go.dev/") {
		t.Errorf("web_search result: %q", text)
	}
}
