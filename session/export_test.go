package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/sessiontest"
)

var ctx = context.Background()

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-golden +got):\n%s", name, diff)
	}
}

// SESS-3: a readable Markdown export: headings per speaker, tool calls on
// one line with their result fenced and cut, thinking folded.
func TestExportMarkdown(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 7, 0, 0, 0, time.UTC)
	long := strings.Repeat("ok  \tpkg/line\n", 30)
	st := &session.State{
		Session: &session.Session{ID: "s1", WorkDir: "/src/app", Preview: "make the tests pass", CreatedAt: t0, UpdatedAt: t0.Add(time.Hour),
			Model: "anthropic/claude-sonnet-4-5", Runs: 1, CostUSD: 0.0123, Usage: llm.Usage{InputTokens: 1200, OutputTokens: 80, CacheReadTokens: 9000}},
		Messages: []llm.Message{
			llm.UserText("make the tests pass"),
			{Role: llm.RoleAssistant, Model: "claude-sonnet-4-5", Content: []llm.Block{
				&llm.Thinking{Text: "Run them first.", Signature: "sig"},
				&llm.Thinking{Redacted: true, Signature: "hidden"},
				&llm.Text{Text: "Let me run the tests."},
				&llm.ToolUse{ID: "c1", Name: "bash", Input: json.RawMessage(`{"command":"go test ./...","timeout":60}`)},
				&llm.ToolUse{ID: "c2", Name: "read_file", Input: json.RawMessage(`{"path":"main.go"}`)},
				&llm.ToolUse{ID: "c3", Name: "todo_write", Input: json.RawMessage(`{"todos":[{"content":"x"}]}`)},
			}},
			{Role: llm.RoleUser, Content: []llm.Block{
				&llm.ToolResult{ToolUseID: "c1", IsError: true, Content: []llm.Block{&llm.Text{Text: long}}},
				&llm.ToolResult{ToolUseID: "c2", Content: []llm.Block{&llm.Text{Text: "package main\n```go\n```"}, &llm.Image{MediaType: "image/png", Data: make([]byte, 2048)}}},
				&llm.ToolResult{ToolUseID: "c3", Content: []llm.Block{&llm.Text{Text: "saved"}}},
			}},
			{Role: llm.RoleAssistant, Content: []llm.Block{&llm.Text{Text: "All tests pass."}}},
		},
		Heal: session.Report{Interrupted: []string{"c0"}},
	}
	var buf bytes.Buffer
	if err := session.ExportMarkdown(&buf, st); err != nil {
		t.Fatal(err)
	}
	golden(t, "export.golden.md", buf.Bytes())
}

// SESS-3: the JSONL export is the stored encoding, one entry a line,
// without unstored damage reports.
func TestExportJSONL(t *testing.T) {
	store := session.NewMemStore()
	if err := store.Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	want := sessiontest.AllKinds()
	if _, err := store.Append(ctx, "s", want...); err != nil {
		t.Fatal(err)
	}
	entries := func(yield func(session.Entry, error) bool) {
		for e, err := range store.Entries(ctx, "s", 0) {
			if !yield(e, err) {
				return
			}
		}
		yield(session.Entry{Kind: session.KindHeal, Heal: &session.HealRecord{}}, nil) // a damage report: left out
	}
	var buf bytes.Buffer
	if err := session.ExportJSONL(&buf, entries); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d", len(lines), len(want))
	}
	var got []session.Entry
	for _, l := range lines {
		var e session.Entry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	for i := range want {
		want[i].Seq = int64(i + 1)
	}
	if diff := cmp.Diff(want, got, sessiontest.Opts); diff != "" {
		t.Errorf("exported entries (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(lines[0], `{"seq":1,"time":"2026-05-06T07:08:09.01Z","kind":"message","run_id":"r1","message":{"role":"assistant"`) {
		t.Errorf("first line: %s", lines[0])
	}
}
