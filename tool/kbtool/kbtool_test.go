package kbtool_test

import (
	"context"
	"encoding/json"
	"errors"
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
	for _, want := range []string{"big.md:1-5000", "(cut; read_file big.md for the rest)", "small.md:3-4 — ## Small", "hybrid search"} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q", want)
		}
	}
}
