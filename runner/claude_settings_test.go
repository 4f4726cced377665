package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/workspace"
)

// TestClaudeSettingsEndToEnd runs a scripted model in a workspace whose
// only permissions are Claude Code's .claude/settings.json (rein issue 25,
// SPEC COMPAT-1, PERM-5): its deny rule stops the model's read of
// README.md, trusted or not; its allow rules run `ls` and `printenv
// CC_MARK` without asking only once the workspace is trusted, and its env
// reaches the commands then.
func TestClaudeSettingsEndToEnd(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		t.Run(map[bool]string{false: "untrusted", true: "trusted"}[trusted], func(t *testing.T) {
			dir := t.TempDir()
			home, work := filepath.Join(dir, "home"), filepath.Join(dir, "project")
			for _, d := range []string{home, filepath.Join(work, ".git"), filepath.Join(work, ".claude")} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			files := map[string]string{
				"README.md": "secret plans\n",
				".claude/settings.json": `{"permissions": {"deny": ["Read(./README.md)"],
					"allow": ["Bash(ls:*)", "Bash(printenv CC_MARK)"]}, "env": {"CC_MARK": "from-claude-settings"}}`,
			}
			for name, content := range files {
				if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"HOME": home, "REIN_SANDBOX": "off", "REIN_MODEL": "scripted/demo"}
			getenv := func(k string) string { return env[k] }
			load := func() *workspace.Loaded {
				l, err := workspace.Load(workspace.Options{WorkDir: work, Getenv: getenv, ClaudeManagedDir: filepath.Join(dir, "managed")})
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			loaded := load()
			if trusted {
				if err := loaded.TrustNow(time.Now()); err != nil {
					t.Fatal(err)
				}
				loaded = load()
			}
			model := llmtest.NewScripted(
				llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "read_file", `{"path":"README.md"}`)}},
				llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c2", "bash", `{"command":"ls"}`)}},
				llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c3", "bash", `{"command":"printenv CC_MARK"}`)}},
				llmtest.Reply{Text: "done"},
			)
			setup := scriptedSetup(t, model, runner.Config{Loaded: loaded, Store: session.NewMemStore(), SessionsDir: filepath.Join(dir, "sessions"), Getenv: getenv})
			var mu sync.Mutex
			var asked []string
			approver := permission.ApproverFunc(func(_ context.Context, p permission.Prompt) (permission.Verdict, error) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, p.Request.Tool+" "+string(p.Request.Input))
				return permission.Verdict{Answer: permission.AnswerDeny, Message: "not now"}, nil
			})
			conv := setup.NewConversation()
			defer conv.Close()
			results := map[string]*agent.ToolEvent{}
			for ev, err := range conv.Submit(context.Background(), "", "go", approver) {
				if err != nil {
					t.Fatal(err)
				}
				if ev.Type == agent.EventToolEnd {
					results[ev.Tool.ID] = ev.Tool
				}
			}
			read := results["c1"]
			if read == nil || !read.IsError || !strings.Contains(read.Output, "Read(") || strings.Contains(read.Output, "secret plans") {
				t.Fatalf("read_file README.md: %+v, want denied by the Claude Code deny rule", read)
			}
			if slices.ContainsFunc(asked, func(s string) bool { return strings.HasPrefix(s, "read_file") }) {
				t.Errorf("the denied read was asked about: %q", asked)
			}
			ls, printenv := results["c2"], results["c3"]
			if ls == nil || printenv == nil {
				t.Fatalf("missing results: %v", results)
			}
			if !trusted {
				if len(asked) != 2 || ls.IsError == false || printenv.IsError == false {
					t.Errorf("untrusted: asked %q; ls %+v; printenv %+v — want both asked and refused", asked, ls, printenv)
				}
				return
			}
			if len(asked) != 0 {
				t.Errorf("trusted: asked %q, want no question", asked)
			}
			if ls.IsError || !strings.Contains(ls.Output, "README.md") {
				t.Errorf("trusted: ls = %+v", ls)
			}
			if printenv.IsError || !strings.Contains(printenv.Output, "from-claude-settings") {
				t.Errorf("trusted: printenv CC_MARK = %+v, want the settings' env", printenv)
			}
		})
	}
}
