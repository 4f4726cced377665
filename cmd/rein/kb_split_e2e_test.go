package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/kb"
	kbpostgres "github.com/reinhq/rein/kb/postgres"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session/postgres/pgtest"
)

// KB-3, API-5 (issue 27): the knowledge bases of a split deployment live
// in its PostgreSQL: a document added to a workspace's knowledge base by
// one process (here the test, as the API's endpoints would, for the
// loopback server's caller "local") is found by
// the kb_search of a run a `rein worker` process runs, and nothing is
// written into the project's .rein/data/kb.db.
func TestSplitKnowledgeBase_KB3(t *testing.T) {
	redisURL := os.Getenv("REIN_TEST_REDIS_URL")
	if redisURL == "" || os.Getenv(pgtest.EnvURL) == "" {
		t.Skip("environment: the split knowledge-base test needs PostgreSQL and Redis: set " + pgtest.EnvURL +
			" (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) and REIN_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379/0)")
	}
	reinBinary(t)
	pgURL, _ := pgtest.Schema(t)
	prefix := fmt.Sprintf("rein-kb-%d:", time.Now().UnixNano())
	t.Cleanup(func() { dropKeys(t, redisURL, prefix) })
	common := []string{"--database-url", pgURL, "--redis-url", redisURL, "--redis-prefix", prefix}
	v := newVendor(t)
	in := newInstance(t, v, append([]string{"--mode", "api"}, common...)...)
	if err := os.MkdirAll(filepath.Join(in.project, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in.project, "docs", "vault.md"),
		[]byte("# The old signing key\n\nThe kestrel vault keeps the retired signing key for 24 hours.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := in.start()
	in.startWorker(common...)

	var ws api.Workspace
	s.must(http.StatusCreated, http.MethodPost, "/workspaces", map[string]string{"kind": "project", "dir": in.project}, &ws)
	var sess api.Session
	s.must(http.StatusCreated, http.MethodPost, "/sessions", map[string]string{"workspace_id": ws.ID}, &sess)

	store, err := kbpostgres.Open(context.Background(), pgURL, kbpostgres.Options{Namespace: runner.KBNamespace("local", ws.ID)})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	base, err := kb.New(kb.Config{Root: in.project, Backend: store})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := base.Add(context.Background(), []string{"docs"}, nil); err != nil || rep.Added != 1 {
		t.Fatalf("add: %+v, %v", rep, err)
	}

	v.Enqueue(mockserver.Turn{ToolCalls: []mockserver.ToolCall{{ID: "kb_1", Name: "kb_search", Input: `{"query":"where is the retired signing key"}`}}},
		mockserver.Turn{Text: "In the kestrel vault."})
	if r := s.finalRun(s.post(sess.ID, map[string]any{"text": "where is the retired signing key kept?"})); r.Status != "completed" {
		t.Fatalf("run: %+v", r)
	}
	reqs := v.Requests()
	if len(reqs) < 2 || reqs[1].Decoded == nil {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	result := ""
	for _, m := range reqs[1].Decoded.Messages {
		for _, b := range m.Content {
			if r, ok := b.(*llm.ToolResult); ok && r.ToolUseID == "kb_1" {
				for _, c := range r.Content {
					if tx, ok := c.(*llm.Text); ok {
						result += tx.Text
					}
				}
			}
		}
	}
	if !strings.Contains(result, "docs/vault.md") || !strings.Contains(result, "kestrel vault") {
		t.Errorf("the worker's kb_search result:\n%s", result)
	}
	if _, err := os.Stat(filepath.Join(in.project, filepath.FromSlash(runner.KBFile))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s in the project of a PostgreSQL deployment: %v, want none", runner.KBFile, err)
	}
}
