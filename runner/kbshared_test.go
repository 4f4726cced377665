package runner_test

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/kb"
	kbpostgres "github.com/reinhq/rein/kb/postgres"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/postgres/pgtest"
)

// kbVendor is a model that, given a prompt, searches the knowledge base
// for it when kb_search is offered and answers with what came back; it
// records, by prompt, whether the tool was offered and its result.
type kbVendor struct {
	mu      sync.Mutex
	offered map[string]bool
	result  map[string]string
}

func newKBVendor() *kbVendor {
	return &kbVendor{offered: map[string]bool{}, result: map[string]string{}}
}

// provider is the vendor as an llm.Provider.
func (v *kbVendor) provider() llm.Provider {
	return &llmtest.Scripted{Repeat: &llmtest.Reply{Func: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		prompt := lastPrompt(req)
		v.mu.Lock()
		defer v.mu.Unlock()
		id := fmt.Sprintf("kb-%08x", crc32.ChecksumIEEE([]byte(prompt))) // a call id of its own each run
		if out := toolResultText(req, id); out != "" {
			v.result[prompt] = out
			return llmtest.NewScripted(llmtest.Reply{Text: "searched"}).Stream(ctx, req)
		}
		v.offered[prompt] = slices.Contains(toolNames(req), "kb_search")
		if !v.offered[prompt] {
			return llmtest.NewScripted(llmtest.Reply{Text: "no knowledge base"}).Stream(ctx, req)
		}
		return llmtest.NewScripted(llmtest.Reply{ToolCalls: []llm.ToolUse{call(id, "kb_search", map[string]string{"query": prompt})}}).Stream(ctx, req)
	}}}
}

// lastPrompt is the text of the newest user message, the reminders
// rein adds (<system-reminder>) left aside.
func lastPrompt(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role != llm.RoleUser {
			continue
		}
		for _, b := range req.Messages[i].Content {
			if t, ok := b.(*llm.Text); ok && !strings.HasPrefix(t.Text, "<system-reminder>") {
				return t.Text
			}
		}
	}
	return ""
}

// search is what the run of prompt saw: kb_search offered, and its result.
func (v *kbVendor) search(prompt string) (bool, string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.offered[prompt], v.result[prompt]
}

// kbDB opens the knowledge-base database at url as a process does, closed
// when the test ends, and returns it with its namespaces as a service
// takes them.
func kbDB(t *testing.T, url string) (*kbpostgres.DB, runner.KBNamespaces) {
	t.Helper()
	d, err := kbpostgres.OpenDB(context.Background(), url, kbpostgres.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, func(ns string) (runner.KBStore, error) { return d.Store(ns) }
}

// addDocs adds paths (under the workspace) to caller's knowledge base of
// workspace wsID through svc, as the server's endpoints do.
func addDocs(t *testing.T, svc *runner.Service, caller, wsID string, paths ...string) *runner.KnowledgeBase {
	t.Helper()
	k, err := svc.KnowledgeBase(context.Background(), caller, wsID)
	if err != nil {
		t.Fatalf("KnowledgeBase(%s, %s): %v", caller, wsID, err)
	}
	defer k.Close()
	if rep, err := k.Add(context.Background(), paths, nil); err != nil || rep.Added == 0 {
		t.Fatalf("add %v to %s's knowledge base: %+v, %v", paths, caller, rep, err)
	}
	return k
}

// runAs submits prompt to session sid as caller and waits for its end.
func runAs(t *testing.T, h *harness, svc *runner.Service, caller, sid, prompt string) {
	t.Helper()
	r, err := svc.Submit(context.Background(), session.Submission{SessionID: sid, Caller: caller, Text: prompt})
	if err != nil {
		t.Fatal(err)
	}
	if r = h.wait(t, r.ID); r.Status != session.RunCompleted {
		t.Fatalf("run %s: %s (%s)", r.ID, r.Status, r.Error)
	}
}

// The documents of the tests: alice's and bob's, each with a word of its
// own the other's searches must never return.
var (
	aliceDocs = map[string]string{"docs/keys.md": "# Rotating the signing key\n\nRun `keyctl rotate --grace 24h`; the kestrel vault holds the old key.\n"}
	bobDocs   = map[string]string{"notes/heron.md": "# Heron payroll\n\nThe heron ledger closes on Fridays; rotate the signing key afterwards.\n"}
)

// KB-3, API-9: on a server whose store is PostgreSQL, a workspace's
// knowledge base lives there under its caller and workspace, not in the
// project's .rein/data/kb.db: documents added through the service are
// what the runs' kb_search finds, and the namespace follows [runner.KBNamespace].
// The attack rows: another caller — even with a workspace over the very
// same directory — can neither open nor search alice's documents, nor
// alice his.
func TestKnowledgeBaseInPostgres_KB3_API9(t *testing.T) {
	url, _ := pgtest.Schema(t)
	_, kbs := kbDB(t, url)
	v := newKBVendor()
	h := newHarness(t, v.provider(), runner.ServiceConfig{KnowledgeBases: kbs})
	writeFiles(t, h.dir, aliceDocs)
	writeFiles(t, h.dir, bobDocs) // the same directory: only what each added is theirs

	k := addDocs(t, h.svc, "alice", h.ws.ID, "docs")
	if k.Path != "" || k.Namespace != runner.KBNamespace("alice", h.ws.ID) {
		t.Errorf("alice's knowledge base: path %q, namespace %q; want none and %q", k.Path, k.Namespace, runner.KBNamespace("alice", h.ws.ID))
	}
	if _, err := os.Stat(filepath.Join(h.dir, filepath.FromSlash(runner.KBFile))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s in the workspace on a PostgreSQL server: %v, want none", runner.KBFile, err)
	}
	alice := h.newSession(t)
	runAs(t, h, h.svc, "alice", alice.ID, "how do I rotate the signing key")
	if ok, res := v.search("how do I rotate the signing key"); !ok || !strings.Contains(res, "docs/keys.md") || !strings.Contains(res, "kestrel") {
		t.Fatalf("alice's kb_search: offered %v, result:\n%s", ok, res)
	}

	bobWS := &session.Workspace{Caller: "bob", Kind: session.WorkspaceProject, Dir: h.dir}
	if err := h.ledger.CreateWorkspace(context.Background(), bobWS); err != nil {
		t.Fatal(err)
	}
	bob := &session.Session{Caller: "bob", Workspace: bobWS.ID, WorkDir: h.dir}
	if err := h.sessions.Create(context.Background(), bob); err != nil {
		t.Fatal(err)
	}
	attacks := []struct {
		name string
		try  func(t *testing.T)
	}{
		{"bob opens alice's workspace's knowledge base by its id", func(t *testing.T) {
			if k, err := h.svc.KnowledgeBase(context.Background(), "bob", h.ws.ID); !errors.Is(err, session.ErrNotFound) {
				if k != nil {
					k.Close()
				}
				t.Errorf("KnowledgeBase(bob, alice's workspace): %v, want session.ErrNotFound", err)
			}
		}},
		{"bob's run over alice's directory, his knowledge base never made, is offered no kb_search", func(t *testing.T) {
			runAs(t, h, h.svc, "bob", bob.ID, "rotate the signing key kestrel")
			if ok, res := v.search("rotate the signing key kestrel"); ok || res != "" {
				t.Errorf("bob's run: kb_search offered %v, result %q", ok, res)
			}
		}},
		{"bob's kb_search, once he has a knowledge base, never returns alice's document", func(t *testing.T) {
			addDocs(t, h.svc, "bob", bobWS.ID, "notes")
			runAs(t, h, h.svc, "bob", bob.ID, "kestrel vault signing key keyctl")
			ok, res := v.search("kestrel vault signing key keyctl")
			if !ok || !strings.Contains(res, "notes/heron.md") || strings.Contains(res, "docs/keys.md") || strings.Contains(res, "kestrel") {
				t.Errorf("bob's kb_search: offered %v, result:\n%s", ok, res)
			}
		}},
		{"alice's kb_search never returns bob's document", func(t *testing.T) {
			runAs(t, h, h.svc, "alice", alice.ID, "heron payroll ledger signing key")
			ok, res := v.search("heron payroll ledger signing key")
			if !ok || strings.Contains(res, "heron") || !strings.Contains(res, "docs/keys.md") {
				t.Errorf("alice's kb_search: offered %v, result:\n%s", ok, res)
			}
		}},
		{"bob's knowledge base, opened directly, lists only his document", func(t *testing.T) {
			k, err := h.svc.KnowledgeBase(context.Background(), "bob", bobWS.ID)
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close()
			docs, err := k.Documents(context.Background())
			if err != nil || len(docs) != 1 || docs[0].Path != "notes/heron.md" {
				t.Errorf("bob's documents: %+v, %v", docs, err)
			}
			res, err := k.Search(context.Background(), "kestrel keyctl", kb.SearchOptions{})
			if err != nil || len(res.Hits) != 0 {
				t.Errorf("bob's search for alice's words: %+v, %v", res, err)
			}
		}},
	}
	for _, a := range attacks {
		t.Run(a.name, a.try)
	}
}

// KB-3, API-5: a worker — another process, with its own connections to
// the database — runs a session's runs with the knowledge base the API
// process added documents to.
func TestKnowledgeBaseWorkerSees_KB3_API5(t *testing.T) {
	url, _ := pgtest.Schema(t)
	_, apiKB := kbDB(t, url)
	_, workerKB := kbDB(t, url)
	v := newKBVendor()
	s := newSplit(t, v.provider(), nil, nil, func(c *runner.ServiceConfig, worker bool) {
		c.KnowledgeBases = apiKB
		if worker {
			c.KnowledgeBases = workerKB
		}
	})
	writeFiles(t, s.dir, aliceDocs)
	addDocs(t, s.api, "alice", s.ws.ID, "docs")
	sess := s.newSession(t)
	runAs(t, s.harness, s.api, "alice", sess.ID, "where is the old signing key kept")
	if ok, res := v.search("where is the old signing key kept"); !ok || !strings.Contains(res, "kestrel vault") {
		t.Fatalf("the worker's kb_search: offered %v, result:\n%s", ok, res)
	}
}

// KB-3: without a shared database (rein serve without --database-url) a
// workspace's knowledge base is its .rein/data/kb.db, made by the service
// and searched by the runs; a chat workspace has none.
func TestKnowledgeBaseSQLiteDefault_KB3(t *testing.T) {
	v := newKBVendor()
	h := newHarness(t, v.provider(), runner.ServiceConfig{})
	writeFiles(t, h.dir, aliceDocs)
	k := addDocs(t, h.svc, "alice", h.ws.ID, "docs")
	if want := filepath.Join(h.dir, filepath.FromSlash(runner.KBFile)); k.Path != want || k.Namespace != "" {
		t.Errorf("knowledge base at %q (namespace %q), want %s", k.Path, k.Namespace, want)
	}
	if _, err := os.Stat(k.Path); err != nil {
		t.Fatal(err)
	}
	sess := h.newSession(t)
	runAs(t, h, h.svc, "alice", sess.ID, "keyctl rotate grace")
	if ok, res := v.search("keyctl rotate grace"); !ok || !strings.Contains(res, "docs/keys.md") {
		t.Fatalf("kb_search over the file: offered %v, result:\n%s", ok, res)
	}

	chat := &session.Workspace{Caller: "alice", Kind: session.WorkspaceChat}
	if err := h.ledger.CreateWorkspace(context.Background(), chat); err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.KnowledgeBase(context.Background(), "alice", chat.ID); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("a chat workspace's knowledge base: %v, want session.ErrInvalid", err)
	}
	if _, err := h.svc.KnowledgeBase(context.Background(), "alice", "no-such-workspace"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("an unknown workspace's knowledge base: %v, want session.ErrNotFound", err)
	}
}

// KB-3: opening the knowledge-base schema again — every process of a
// deployment does at its start — applies nothing twice.
func TestKnowledgeBaseMigrationsIdempotent_KB3(t *testing.T) {
	url, _ := pgtest.Schema(t)
	for range 3 {
		d, _ := kbDB(t, url)
		d.Close()
	}
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var n, distinct int
	if err := c.QueryRow(context.Background(), `SELECT count(*), count(DISTINCT version) FROM rein_kb_migrations`).Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("../kb/postgres/migrations")
	if err != nil {
		t.Fatal(err)
	}
	if n != len(entries) || distinct != n {
		t.Errorf("rein_kb_migrations holds %d rows (%d versions) after three opens, want %d", n, distinct, len(entries))
	}
}

// API-9: the namespaces of distinct (caller, workspace) pairs differ even
// when the caller's id is crafted to spell another pair's; each has one
// alphabet and fits the store's 256 bytes.
func TestKBNamespace_API9(t *testing.T) {
	pairs := [][2]string{
		{"alice", "w1"}, {"bob", "w1"}, {"alice", "w2"},
		{"a/ws/b", "c"}, {"a", "b/ws/c"}, {"", "w1"}, {"alice\x00", "w1"},
		{strings.Repeat("é", 128), strings.Repeat("w", 128)},
	}
	seen := map[string][2]string{}
	for _, p := range pairs {
		ns := runner.KBNamespace(p[0], p[1])
		if prev, dup := seen[ns]; dup {
			t.Errorf("%q and %q share namespace %q", prev, p, ns)
		}
		seen[ns] = p
		if len(ns) > 256 {
			t.Errorf("namespace of %q is %d bytes, over 256", p, len(ns))
		}
	}
}

// API-9: what a server's runs' tools may not reach — its data directory
// (Tenancy.Hidden), here inside a workspace — never enters the
// workspace's knowledge base either, whichever backend holds it: an add
// of the whole workspace skips it, saying why, and a search never shows
// its secret.
func TestKnowledgeBaseSkipsServerFiles_API9(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"docs/guide.md":          "# Guide\n\nThe osprey nests by the river.\n",
				"server-data/jwt-secret": "OSPREY-SERVER-SECRET-5521 osprey\n",
			})
			cfg := runner.ServiceConfig{Tenancy: &runner.Tenancy{Hidden: []string{filepath.Join(dir, "server-data")}}}
			if backend == "postgres" {
				url, _ := pgtest.Schema(t)
				_, cfg.KnowledgeBases = kbDB(t, url)
			}
			h := newHarness(t, llmtest.NewScripted(), cfg)
			ws := &session.Workspace{Caller: "alice", Kind: session.WorkspaceProject, Dir: dir}
			if err := h.ledger.CreateWorkspace(context.Background(), ws); err != nil {
				t.Fatal(err)
			}
			k, err := h.svc.KnowledgeBase(context.Background(), "alice", ws.ID)
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close()
			rep, err := k.Add(context.Background(), []string{"."}, nil)
			if err != nil {
				t.Fatal(err)
			}
			skipped := false
			for _, s := range rep.Skipped {
				skipped = skipped || s.Path == "server-data/jwt-secret" && strings.Contains(s.Reason, "fence")
			}
			if rep.Added != 1 || !skipped {
				t.Errorf("add of the workspace: %+v, want docs/guide.md added and server-data/jwt-secret skipped by the fence", rep)
			}
			res, err := k.Search(context.Background(), "osprey server secret", kb.SearchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, hit := range res.Hits {
				if strings.Contains(hit.Text, "OSPREY-SERVER-SECRET") {
					t.Errorf("a search shows the server's secret: %+v", hit)
				}
			}
		})
	}
}
