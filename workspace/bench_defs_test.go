package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLoadDefinitions loads a workspace with 100 skills and 20
// agents (and the built-in agents), as every run does.
func BenchmarkLoadDefinitions(b *testing.B) {
	home := b.TempDir()
	ws := filepath.Join(home, "repo")
	for i := range 100 {
		writeTB(b, filepath.Join(ws, ".rein", "skills", fmt.Sprintf("skill-%03d", i), "SKILL.md"),
			fmt.Sprintf("---\nname: skill-%03d\ndescription: Does task %d when the user asks for it, with care.\nallowed-tools: Read, Grep, Bash(make:*)\n---\n# Skill %d\n\nStep one.\nStep two.\n", i, i, i))
	}
	for i := range 20 {
		writeTB(b, filepath.Join(ws, ".claude", "agents", fmt.Sprintf("agent-%02d.md", i)),
			fmt.Sprintf("---\nname: agent-%02d\ndescription: Specialist %d.\ntools: Read, Grep, Glob\nmodel: inherit\n---\nYou are specialist %d.\n", i, i, i))
	}
	p := Paths{Home: home, ConfigDir: filepath.Join(home, ".config", "rein")}
	opts := DefinitionOptions{Getenv: func(string) string { return "" }}
	b.ReportAllocs()
	for b.Loop() {
		d := LoadDefinitionsWith(p, Workspace{Root: ws}, true, opts)
		if len(d.Skills) != 100 || len(d.Agents) != 22 || len(d.Problems) > 0 {
			b.Fatalf("%d skills, %d agents, problems %v", len(d.Skills), len(d.Agents), d.Problems)
		}
	}
}

func writeTB(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}
