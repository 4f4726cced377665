package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trustBenchWorkspace writes a workspace with what a real one brings:
// settings, three hooks running scripts (rein's and Claude Code's
// format), three actions (one a linked directory), two skills, an agent
// and an MCP server running a script of the repository.
func trustBenchWorkspace(b *testing.B) string {
	ws := filepath.Join(b.TempDir(), "repo")
	files := map[string]string{
		".rein/settings.yaml": "permissions:\n  allow: [\"bash(go test:*)\"]\nappend_system_prompt: Be brief.\n",
		".rein/hooks.yaml": "hooks:\n  pre_tool_use:\n    - {matcher: bash, command: \"bash .rein/hooks/guard.sh\"}\n" +
			"  stop:\n    - {command: \"timeout 30 python3 tools/notify.py --quiet\"}\n",
		".claude/settings.json":    `{"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/fmt.sh"}]}]}}`,
		".rein/hooks/guard.sh":     strings.Repeat("# guard\n", 200),
		"tools/notify.py":          strings.Repeat("# notify\n", 200),
		".claude/hooks/fmt.sh":     strings.Repeat("# fmt\n", 200),
		".mcp.json":                `{"mcpServers": {"local": {"command": "node", "args": ["mcp/server.js"]}}}`,
		"mcp/server.js":            strings.Repeat("// server\n", 2000),
		"shared/lint/ACTION.yaml":  "description: Lint.\ncommand: [./run.sh]\n",
		"shared/lint/run.sh":       "go vet ./...\n",
		".rein/agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews.\n---\nYou review.\n",
	}
	for i := range 2 {
		files[fmt.Sprintf(".rein/actions/a%d/ACTION.yaml", i)] = "description: A.\ncommand: \"bash $REIN_ACTION_DIR/run.sh\"\n"
		files[fmt.Sprintf(".rein/actions/a%d/run.sh", i)] = strings.Repeat("echo\n", 100)
		files[fmt.Sprintf(".rein/skills/s%d/SKILL.md", i)] = "---\nname: s\ndescription: S.\n---\n" + strings.Repeat("Step.\n", 300)
	}
	for rel, body := range files {
		writeTB(b, filepath.Join(ws, rel), body)
	}
	if err := os.Symlink("../../shared/lint", filepath.Join(ws, ".rein", "actions", "lint")); err != nil {
		b.Fatal(err)
	}
	return ws
}

// BenchmarkFingerprint fingerprints that workspace, as every run (and
// every "always allow" answer, twice) does (SPEC PERM-5).
func BenchmarkFingerprint(b *testing.B) {
	ws := trustBenchWorkspace(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Fingerprint(ws); err != nil {
			b.Fatal(err)
		}
	}
}
