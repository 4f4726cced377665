package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/cli/tui"
)

// CLI-6: the in-session panels print what the rein commands print
// (doctor, agents list, mcp list, init); /permissions lists the mode and
// rules and adds one; bad arguments say what to write.
func TestPanels_CLI6(t *testing.T) {
	te := newTestEnv(t)
	te.script("m")
	drive(t, te, func(ctx context.Context, b tui.Backend, _ tui.Options) {
		ps, ok := b.(tui.PanelSource)
		if !ok {
			t.Fatal("the backend has no panels")
		}
		run := func(name, args string) string {
			t.Helper()
			out, err := ps.Panel(ctx, name, args)
			if err != nil {
				t.Fatalf("/%s %s: %v", name, args, err)
			}
			return out
		}
		if out := run("permissions", ""); !strings.Contains(out, "**Permission mode:** default") || !strings.Contains(out, "`bash(rm:*)` (run)") {
			t.Errorf("/permissions:\n%s", out)
		}
		if out := run("permissions", "allow bash(go test:*)"); out != "Added the rule allow bash(go test:*)." {
			t.Errorf("/permissions allow: %q", out)
		}
		if out := run("permissions", ""); !strings.Contains(out, "`bash(go test:*)` (session)") {
			t.Errorf("the added rule is not listed:\n%s", out)
		}
		for _, bad := range []struct{ args, want string }{
			{"permit bash", "want allow, ask or deny"},
			{"allow bash(go test", "missing closing parenthesis"},
		} {
			if _, err := ps.Panel(ctx, "permissions", bad.args); err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("/permissions %s: %v, want %q", bad.args, err, bad.want)
			}
		}
		if out := run("doctor", ""); !strings.HasPrefix(out, "```text\nrein doctor:") || !strings.Contains(out, "configuration") {
			t.Errorf("/doctor:\n%s", out)
		}
		if out := run("agents", ""); !strings.Contains(out, "NAME") {
			t.Errorf("/agents:\n%s", out)
		}
		if out := run("mcp", ""); !strings.Contains(out, "No MCP servers") {
			t.Errorf("/mcp:\n%s", out)
		}
		if out := run("init", ""); !strings.Contains(out, "Created") || !strings.Contains(out, "next session") {
			t.Errorf("/init:\n%s", out)
		}
		if _, err := os.Stat(filepath.Join(te.ws, "AGENTS.md")); err != nil {
			t.Errorf("/init wrote no AGENTS.md: %v", err)
		}
		if _, err := ps.Panel(ctx, "init", ""); err == nil || !strings.Contains(err.Error(), "already set up") {
			t.Errorf("a second /init: %v", err)
		}
		if _, err := ps.Panel(ctx, "init", "server"); err == nil || !strings.Contains(err.Error(), "want /init or /init chat") {
			t.Errorf("/init server: %v", err)
		}
	}, "--model", "scripted/m", "--disallowed-tools", "bash(rm:*)")
}
