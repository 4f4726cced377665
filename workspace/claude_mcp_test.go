package workspace

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// COMPAT-1, MCP-1: Claude Code's enableAllProjectMcpServers,
// enabledMcpjsonServers and disabledMcpjsonServers gate the servers of
// the project's .mcp.json on top of rein's trust — the stricter wins —
// and each server left out is listed with the reason. type sse is read
// as the SSE transport, ${VAR:-default} expanded in its url.
func TestClaudeMCPApproval_COMPAT1(t *testing.T) {
	const mcpJSON = `{"mcpServers": {
  "a": {"command": "a-mcp"},
  "b": {"command": "b-mcp"},
  "c": {"type": "sse", "url": "${SSE_BASE:-http://127.0.0.1:9}/sse"}}}`
	rows := []struct {
		name     string
		settings map[string]string // file (relative to the workspace, or ~/ for home) → content
		trusted  bool
		want     []string // the .mcp.json servers that load
		skipped  []string // "name: part of the reason"
	}{
		{"no settings: trust decides", nil, true, []string{"a", "b", "c"}, nil},
		{"untrusted: nothing, whatever the settings", map[string]string{".claude/settings.local.json": `{"enableAllProjectMcpServers": true}`},
			false, nil, nil},
		{"enabled list", map[string]string{".claude/settings.local.json": `{"enabledMcpjsonServers": ["a", "c"]}`}, true,
			[]string{"a", "c"}, []string{"b: enabledMcpjsonServers in .claude/settings.local.json does not list it"}},
		{"disabled wins over enableAll", map[string]string{
			".claude/settings.json":       `{"enableAllProjectMcpServers": true}`,
			".claude/settings.local.json": `{"disabledMcpjsonServers": ["b"]}`}, true,
			[]string{"a", "c"}, []string{"b: disabledMcpjsonServers in .claude/settings.local.json lists it"}},
		{"disabled wins over enabled", map[string]string{"~/.claude/settings.json": `{"enabledMcpjsonServers": ["a","b"], "disabledMcpjsonServers": ["a"]}`}, true,
			[]string{"b"}, []string{"a: disabledMcpjsonServers", "c: enabledMcpjsonServers"}},
		{"enableAll false", map[string]string{".claude/settings.local.json": `{"enableAllProjectMcpServers": false}`}, true,
			nil, []string{"a: enableAllProjectMcpServers is false", "b: enableAllProjectMcpServers is false", "c: enableAllProjectMcpServers is false"}},
		{"enableAll true at a higher level beats a list", map[string]string{
			".claude/settings.local.json": `{"enableAllProjectMcpServers": true}`,
			".claude/settings.json":       `{"enabledMcpjsonServers": ["a"]}`}, true, []string{"a", "b", "c"}, nil},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			home := t.TempDir()
			work := filepath.Join(home, "proj")
			mkdir(t, filepath.Join(work, ".git"))
			mkdir(t, filepath.Join(work, ".claude"))
			mkdir(t, filepath.Join(home, ".claude"))
			write(t, filepath.Join(work, ".mcp.json"), mcpJSON)
			for name, body := range row.settings {
				p := filepath.Join(work, name)
				if rest, ok := strings.CutPrefix(name, "~/"); ok {
					p = filepath.Join(home, rest)
				}
				write(t, p, body)
			}
			env := map[string]string{"HOME": home}
			opts := Options{WorkDir: work, Getenv: func(k string) string { return env[k] }, ClaudeManagedDir: filepath.Join(home, "managed")}
			l, err := Load(opts)
			if err != nil {
				t.Fatal(err)
			}
			if row.trusted {
				if err := l.TrustNow(time.Now()); err != nil {
					t.Fatal(err)
				}
				if l, err = Load(opts); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			for _, s := range l.Definitions().MCP {
				if s.Path == filepath.Join(work, ".mcp.json") {
					got = append(got, s.Name)
				}
			}
			if !slices.Equal(got, row.want) {
				t.Errorf("loaded %v, want %v", got, row.want)
			}
			if len(l.MCPSkipped) != len(row.skipped) {
				t.Fatalf("skipped %+v, want %v", l.MCPSkipped, row.skipped)
			}
			for i, s := range l.MCPSkipped {
				if name, reason, _ := strings.Cut(row.skipped[i], ": "); s.Name != name || !strings.Contains(s.Reason, reason) {
					t.Errorf("skipped %+v, want %s", s, row.skipped[i])
				}
				if !slices.ContainsFunc(l.Warnings, func(w string) bool { return strings.Contains(w, "MCP server "+s.Name+" of .mcp.json is not loaded") }) {
					t.Errorf("no warning for %s: %q", s.Name, l.Warnings)
				}
			}
			if c, ok := l.AllDefinitions().Server("c"); ok && (c.Transport != "sse" || c.URL != "http://127.0.0.1:9/sse") {
				t.Errorf("c = %+v, want the sse transport and the default url", c)
			}
		})
	}
}

// COMPAT-1: a settings file with a bad enabledMcpjsonServers stops rein
// with an error naming the key, as every malformed settings key does.
func TestClaudeMCPApprovalBadValue_COMPAT1(t *testing.T) {
	for _, body := range []string{`{"enabledMcpjsonServers": "a"}`, `{"enableAllProjectMcpServers": "yes"}`, `{"disabledMcpjsonServers": [1]}`} {
		_, err := ParseClaudeSettings([]byte(body), ClaudeLocal, ClaudeRuleBase{Root: "/w"})
		key := strings.Split(body, `"`)[1]
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: error %v, want one naming %s", body, err, key)
		}
	}
}
