package runner_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/kb"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/workspace"
)

// KB-3: kb_search is offered once the workspace has a knowledge base, and
// finds what `rein kb add` indexed; without one it is not offered, and
// OpenKnowledgeBase says how to make one.
func TestKnowledgeBaseTool_KB3(t *testing.T) {
	files := map[string]string{
		"docs/runbook.md": "# Rotating the signing key\n\nRun `keyctl rotate --grace 24h`, then redeploy the verifiers.\n",
		"docs/other.md":   "# Lunch\n\nThe canteen opens at noon.\n",
	}
	p := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{call("k1", "kb_search", map[string]string{"query": "rotate the signing key"})}},
		llmtest.Reply{Text: "found it"},
	)
	e := testEngine(t, p, engineSetup{workspace: files})
	root := e.Setup().Workspace().Root
	getenv := func(k string) string { return map[string]string{"HOME": t.TempDir()}[k] }
	l, err := workspace.Load(workspace.Options{WorkDir: root, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runner.OpenKnowledgeBase(l, e.Setup().Registry(), nil, false); !errors.Is(err, runner.ErrNoKnowledgeBase) {
		t.Fatalf("open without a base: %v, want ErrNoKnowledgeBase", err)
	}
	k, err := runner.OpenKnowledgeBase(l, e.Setup().Registry(), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := k.Add(ctx, []string{"docs"}, nil)
	if err != nil || rep.Added != 2 {
		t.Fatalf("add: %+v, %v", rep, err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(k.Path); err != nil {
		t.Fatal(err)
	}

	run(t, e, "how do I rotate the key?")
	reqs := p.Requests()
	if !slices.Contains(toolNames(reqs[0]), "kb_search") {
		t.Fatalf("kb_search not offered: %v", toolNames(reqs[0]))
	}
	result := toolResultText(reqs[1], "k1")
	if !strings.Contains(result, "docs/runbook.md:1-") || !strings.Contains(result, "keyctl rotate") {
		t.Errorf("kb_search result:\n%s\nmessages: %+v", result, reqs[1].Messages)
	}

	// A workspace without a knowledge base has no kb_search.
	p2 := llmtest.NewScripted(llmtest.Reply{Text: "ok"})
	run(t, testEngine(t, p2, engineSetup{workspace: files}), "hi")
	if slices.Contains(toolNames(p2.Requests()[0]), "kb_search") {
		t.Error("kb_search offered without a knowledge base")
	}
}

// toolResultText is the text of the result of call id in req's messages.
func toolResultText(req *llm.Request, id string) string {
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if r, ok := b.(*llm.ToolResult); ok && r.ToolUseID == id {
				var sb strings.Builder
				for _, c := range r.Content {
					if t, ok := c.(*llm.Text); ok {
						sb.WriteString(t.Text)
					}
				}
				return sb.String()
			}
		}
	}
	return ""
}

// PERM-2: the policy's sensitive files never enter the knowledge base,
// named outright or met in a walk, so kb_search (a read tool allowed in
// every mode) cannot hand the model a key that read_file would refuse.
func TestKnowledgeBaseRefusesSensitiveFiles_PERM2(t *testing.T) {
	root := t.TempDir()
	for name, body := range map[string]string{"docs/guide.md": "# Guide\n\nhello\n", "docs/.env": "API_KEY=sk-live-123\n",
		"docs/deploy/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n", "docs/tls/server.pem": "-----BEGIN PRIVATE KEY-----\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := workspace.Load(workspace.Options{WorkDir: root, Getenv: func(k string) string {
		return map[string]string{"HOME": t.TempDir()}[k]
	}})
	if err != nil {
		t.Fatal(err)
	}
	k, err := runner.OpenKnowledgeBase(l, nil, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	rep, err := k.Add(ctx, []string{"docs", "docs/.env", "docs/deploy/id_rsa"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := k.Documents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0].Path != "docs/guide.md" {
		t.Errorf("indexed %+v, want only docs/guide.md (skipped: %+v)", docs, rep.Skipped)
	}
	res, err := k.Search(ctx, "PRIVATE KEY sk-live", kb.SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 0 {
		t.Errorf("a search found secrets: %+v", res.Hits)
	}
}

// A repository cannot plant links that make rein create or write the
// knowledge base elsewhere: .rein/data or kb.db (or its -wal) as a link
// is refused, and nothing appears at the link's target.
func TestKnowledgeBaseRefusesPlantedLinks(t *testing.T) {
	load := func(root string) *workspace.Loaded {
		l, err := workspace.Load(workspace.Options{WorkDir: root, Getenv: func(k string) string {
			return map[string]string{"HOME": t.TempDir()}[k]
		}})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for name, plant := range map[string]func(root, target string) error{
		"data dir": func(root, target string) error {
			if err := os.MkdirAll(filepath.Join(root, ".rein"), 0o755); err != nil {
				return err
			}
			return os.Symlink(filepath.Dir(target), filepath.Join(root, ".rein", "data"))
		},
		"database": func(root, target string) error {
			if err := os.MkdirAll(filepath.Join(root, ".rein", "data"), 0o755); err != nil {
				return err
			}
			return os.Symlink(target, filepath.Join(root, ".rein", "data", "kb.db"))
		},
		"wal": func(root, target string) error {
			if err := os.MkdirAll(filepath.Join(root, ".rein", "data"), 0o755); err != nil {
				return err
			}
			return os.Symlink(target, filepath.Join(root, ".rein", "data", "kb.db-wal"))
		},
	} {
		t.Run(name, func(t *testing.T) {
			root, elsewhere := t.TempDir(), t.TempDir()
			target := filepath.Join(elsewhere, "kb.db")
			if err := plant(root, target); err != nil {
				t.Fatal(err)
			}
			k, err := runner.OpenKnowledgeBase(load(root), nil, nil, true)
			if err == nil {
				k.Close()
				t.Fatal("a knowledge base opened through a planted link")
			}
			if !strings.Contains(err.Error(), "link") {
				t.Errorf("error %q does not say what is wrong", err)
			}
			if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
				t.Errorf("files written at the link's target: %v", entries)
			}
		})
	}
}
