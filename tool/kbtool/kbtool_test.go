package kbtool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/kb"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/kbtool"
)

// base indexes files (name → content) into an in-memory knowledge base.
func base(t *testing.T, files map[string]string) *kb.Base {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := kb.New(kb.Config{Root: dir, Backend: kb.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Add(context.Background(), []string{"."}, nil); err != nil {
		t.Fatal(err)
	}
	return b
}

func call(t *testing.T, tl tool.Tool, in string) tool.Result {
	t.Helper()
	r, err := tl.Run(context.Background(), tool.Call{ID: "c1", Name: kbtool.Name, Input: json.RawMessage(in)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSearch checks kb_search (SPEC KB-3): hits name file and lines, the
// keyword-only mode says so, an empty query is an error the model reads,
// and a fence inside a document cannot close the excerpt's.
func TestSearch(t *testing.T) {
	b := base(t, map[string]string{
		"docs/deploy.md":  "# Deploying\n\nRun `make release` then push the tag.\nThe staging cluster is eu-west.\n",
		"docs/style.md":   "# Style\n\nTabs, not spaces. Errors wrapped with the operation.\n",
		"notes/fences.md": "# Fences\n\nrollback steps:\n```\nkubectl rollout undo\n```\n",
	})
	opened := 0
	tl := kbtool.New(func(context.Context) (*kb.Base, error) { opened++; return b, nil })

	r := call(t, tl, `{"query":"how do I deploy a release"}`)
	text := r.TextOf()
	if r.IsError || !strings.Contains(text, "docs/deploy.md:1-") || !strings.Contains(text, "make release") {
		t.Errorf("deploy query:\n%s", text)
	}
	if !strings.Contains(text, "keyword search") || !strings.Contains(text, "kb.embedding_model") {
		t.Errorf("a keyword-only search does not say so:\n%s", text)
	}

	r = call(t, tl, `{"query":"rollout undo","top_k":1}`)
	text = r.TextOf()
	if !strings.Contains(text, "notes/fences.md") || !strings.Contains(text, "````\n") {
		t.Errorf("a document's fence is not escaped by a longer one:\n%s", text)
	}
	if strings.Count(text, "notes/") != 1 || strings.Contains(text, "docs/") {
		t.Errorf("top_k 1 returned more than one excerpt:\n%s", text)
	}

	for _, in := range []string{`{"query":"   "}`, `{"query":"the and of"}`} {
		if r := call(t, tl, in); !r.IsError {
			t.Errorf("%s: not an error: %s", in, r.TextOf())
		}
	}
	if r := call(t, tl, `{"query":"zebra quantum"}`); r.IsError || !strings.Contains(r.TextOf(), "No match") {
		t.Errorf("no match: %+v %s", r.IsError, r.TextOf())
	}
	if opened != 1 {
		t.Errorf("the base was opened %d times, want once", opened)
	}
}

// TestOpenFailure: a base that cannot be opened is an error result, and
// the next search tries again.
func TestOpenFailure(t *testing.T) {
	fails := true
	b := base(t, map[string]string{"a.md": "alpha beta gamma\n"})
	tl := kbtool.New(func(context.Context) (*kb.Base, error) {
		if fails {
			return nil, errors.New("database is locked")
		}
		return b, nil
	})
	if r := call(t, tl, `{"query":"alpha"}`); !r.IsError || !strings.Contains(r.TextOf(), "database is locked") {
		t.Errorf("open failure: %+v %s", r.IsError, r.TextOf())
	}
	fails = false
	if r := call(t, tl, `{"query":"alpha"}`); r.IsError || !strings.Contains(r.TextOf(), "a.md:1-1") {
		t.Errorf("after the failure: %s", r.TextOf())
	}
}

// TestRenderCuts: long excerpts are cut to share the result's budget.
func TestRenderCuts(t *testing.T) {
	long := strings.Repeat("line of text that goes on\n", 5000)
	res := &kb.Results{Mode: kb.ModeHybrid, Hits: []kb.Result{
		{Chunk: kb.Chunk{Doc: "big.md", Start: 1, End: 5000, Text: long}},
		{Chunk: kb.Chunk{Doc: "small.md", Start: 3, End: 4, Heading: "## Small\n", Text: "x\ny\n"}},
	}}
	out := kbtool.Render(res)
	if len(out) > 26<<10 {
		t.Errorf("rendered %d bytes, want about 24 KiB at most", len(out))
	}
	for _, want := range []string{"big.md:1-5000", "(cut; read_file big.md for the rest)", "small.md:3-4 — in ## Small", "hybrid search"} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q", want)
		}
	}
}

// TestHitsShowWhatMatters_KB4: a hit names its file, line span and the
// declaration it sits in, lists the query terms it holds, and shows the
// numbered lines holding them rather than the whole chunk; without top_k
// a search returns DefaultTopK hits at most; a test file ranks below the
// code it tests unless the query asks for tests.
func TestHitsShowWhatMatters_KB4(t *testing.T) {
	var code strings.Builder
	code.WriteString("package retry\n\n// Backoff returns how long to wait before attempt n.\nfunc Backoff(n int) time.Duration {\n")
	for i := range 30 {
		fmt.Fprintf(&code, "\tx%d := n * %d // filler\n", i, i)
	}
	code.WriteString("\treturn base << n // exponential backoff, capped\n}\n")
	files := map[string]string{
		"retry/backoff.go":      code.String(),
		"retry/backoff_test.go": "package retry\n\nfunc TestBackoff(t *testing.T) {\n\tif Backoff(1) != 2*base { t.Fatal(\"backoff\") } // retries back off\n}\n",
	}
	for i := range 9 {
		files[fmt.Sprintf("notes/n%d.md", i)] = "# Note\n\nRetries back off here too.\n"
	}
	tl := kbtool.New(func(context.Context) (*kb.Base, error) { return base(t, files), nil })
	text := call(t, tl, `{"query":"how do retries back off"}`).TextOf()
	first := strings.Index(text, "retry/backoff.go:")
	if first < 0 || first > strings.Index(text, "retry/backoff_test.go") && strings.Contains(text, "retry/backoff_test.go") {
		t.Errorf("the implementation is not above its test:\n%s", text)
	}
	for _, want := range []string{"retry/backoff.go:1-36 — in package retry", "matched: ", "backoff", "return base << n // exponential backoff, capped", "…"} {
		if !strings.Contains(text, want) {
			t.Errorf("the result lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "x12 := n * 12") {
		t.Errorf("the snippet shows lines without a matched term:\n%s", text)
	}
	if n := strings.Count(text, "\nmatched: "); n > kbtool.DefaultTopK {
		t.Errorf("%d hits without top_k, want at most %d", n, kbtool.DefaultTopK)
	}
	text = call(t, tl, `{"query":"backoff tests","top_k":2}`).TextOf()
	if !strings.HasPrefix(text[strings.Index(text, "\n\n")+2:], "retry/backoff_test.go") {
		t.Errorf("a query asking for tests does not find the test first:\n%s", text)
	}
}
