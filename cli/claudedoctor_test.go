package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// COMPAT-1: rein doctor lists what Claude Code's settings hold that rein
// does not apply — an unmappable rule, an unsupported key — each with its
// file, in text and JSON.
func TestDoctorClaudeUnmapped_COMPAT1(t *testing.T) {
	te := newTestEnv(t)
	te.write(".claude/settings.json", `{"permissions": {"deny": ["Read(./README.md)", "Bash(git * main)", "Agent(Explore)"],
		"additionalDirectories": ["../docs"]}, "statusLine": {"type": "command", "command": "x"}}`)
	_, out, _ := te.run("doctor")
	for _, want := range []string{
		"Claude Code project settings .claude/settings.json: deny rule Agent(Explore) not applied",
		"additionalDirectories (../docs) not applied",
		"keys rein does not use: statusLine",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Read(./README.md) not applied") || strings.Contains(out, "Bash(git * main) not applied") {
		t.Errorf("doctor reports a rule that maps:\n%s", out)
	}
	_, out, _ = te.run("doctor", "--json")
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !hasCheck(r, "claude code settings", statusWarning) {
		t.Errorf("doctor --json has no claude code settings warning: %s", out)
	}
}

// COMPAT-1, MCP-1: rein doctor says which servers of the project's
// .mcp.json Claude Code's settings leave out (disabledMcpjsonServers,
// enabledMcpjsonServers) and why, as an mcp check, not a configuration
// warning.
func TestDoctorMCPSkipped_COMPAT1(t *testing.T) {
	te := newTestEnv(t)
	te.write(".mcp.json", `{"mcpServers": {"kept": {"command": "/nonexistent/kept-mcp"}, "off": {"command": "off-mcp"}, "other": {"command": "other-mcp"}}}`)
	te.write(".claude/settings.local.json", `{"enabledMcpjsonServers": ["kept", "off"], "disabledMcpjsonServers": ["off"]}`)
	te.mustRun(ExitOK, "trust")
	_, out, _ := te.run("doctor")
	for _, want := range []string{
		"off: skipped (.mcp.json): disabledMcpjsonServers in .claude/settings.local.json lists it",
		"other: skipped (.mcp.json): enabledMcpjsonServers in .claude/settings.local.json does not list it",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "kept: skipped") {
		t.Errorf("doctor skips the enabled server:\n%s", out)
	}
}

// MCP-1, COMPAT-1: rein mcp add --transport sse writes type: sse, which
// rein mcp list shows as the sse transport; sse without --url, or an
// unknown transport, is a usage error.
func TestMCPAddSSE_COMPAT1(t *testing.T) {
	te := newTestEnv(t)
	user := te.userFile("mcp.yaml", "servers: {}\n")
	te.mustRun(ExitOK, "mcp", "add", "legacy", "--transport", "sse", "--url", "http://127.0.0.1:9/sse")
	b, _ := os.ReadFile(user)
	if !strings.Contains(string(b), "type: sse") || !strings.Contains(string(b), "http://127.0.0.1:9/sse") {
		t.Errorf("mcp.yaml:\n%s", b)
	}
	out, _ := te.mustRun(ExitOK, "mcp", "list", "--json")
	var views []mcpView
	if err := json.Unmarshal([]byte(out), &views); err != nil {
		t.Fatal(err)
	}
	if len(views) != 1 || views[0].Transport != "sse" {
		t.Errorf("list: %+v", views)
	}
	for _, args := range [][]string{{"mcp", "add", "x", "--transport", "sse", "--", "cmd"}, {"mcp", "add", "x", "-t", "ws", "--url", "https://x"},
		{"mcp", "add", "x", "-t", "stdio", "--url", "https://x"}} {
		if code, _, errs := te.run(args...); code != ExitUsage || !strings.Contains(errs, "--transport") {
			t.Errorf("rein %s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
	}
}
