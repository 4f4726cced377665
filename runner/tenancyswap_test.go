package runner_test

import (
	"context"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
)

// API-9: the attack table of a workspace swapped for a link during its run.
// bob opens a directory of his and a directory inside it as two
// workspaces; while a run of the inner one goes on (waiting on the model,
// or on bob's answer to a question), a command of his run in the outer one
// renames the inner directory away and puts a link to alice's workspace in
// its place. The run checked its directory when it started; each row is a
// call it then makes, which must neither show alice's secret nor write in
// her directory.
func TestTenantWorkspaceSwapAttacks_API9(t *testing.T) {
	if err := (&exec.Sandbox{}).Available(); err != nil {
		t.Skipf("environment: bwrap cannot run here, the confined server run is untested: %v", err)
	}
	for _, a := range []struct {
		name, tool, in string
	}{
		{"read_file of a file of the swapped workspace", "read_file", input("path", "notes.txt")},
		{"grep over the swapped workspace", "grep", input("pattern", "PELICAN", "path", ".")},
		{"list_dir of the swapped workspace", "list_dir", input("path", ".")},
		{"write_file into the swapped workspace", "write_file", input("path", "pwned.txt", "content", "x")},
		{"a command in the swapped workspace", "bash", input("command", "cat notes.txt; echo x > pwned.txt")},
	} {
		t.Run(a.name, func(t *testing.T) {
			w := newTenantWorld(t, &runner.Tenancy{RemoteCallers: true})
			sub := filepath.Join(w.bobDir, "sub")
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			inner := &session.Workspace{Caller: "bob", Kind: session.WorkspaceProject, Dir: sub}
			if err := w.h.ledger.CreateWorkspace(ctx, inner); err != nil {
				t.Fatal(err)
			}
			s := &session.Session{Caller: "bob", Workspace: inner.ID, WorkDir: sub}
			if err := w.h.sessions.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
			call := llmtest.NewScripted(llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", a.tool, a.in)}})
			w.p.Push(llmtest.Reply{Func: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
				// The run has started; bob's other run swaps its directory.
				if err := os.Rename(sub, sub+".old"); err != nil {
					t.Error(err)
				}
				if err := os.Symlink(w.h.dir, sub); err != nil {
					t.Error(err)
				}
				return call.Stream(ctx, req)
			}}, llmtest.Reply{Text: "done"})
			r, err := w.h.svc.Submit(ctx, session.Submission{SessionID: s.ID, Caller: "bob", Text: "go", PermissionMode: "bypass"})
			if err != nil {
				t.Fatal(err)
			}
			w.h.wait(t, r.ID)
			reqs := w.p.Requests()
			found := false
			for _, m := range reqs[len(reqs)-1].Messages {
				for _, b := range m.Content {
					if tr, ok := b.(*llm.ToolResult); ok {
						found = true
						if text := resultText(tr); strings.Contains(text, aliceSecret) || !tr.IsError {
							t.Errorf("not refused: error=%v %.300q", tr.IsError, text)
						}
					}
				}
			}
			if !found {
				t.Fatal("the call got no result")
			}
			if _, err := os.Lstat(filepath.Join(w.h.dir, "pwned.txt")); err == nil {
				t.Error("bob wrote in alice's directory")
			}
		})
	}
}
