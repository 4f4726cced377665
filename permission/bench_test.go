package permission

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/shellparse"
)

// BenchmarkDecideBash measures one decision on a compound shell command
// against a dozen rules.
func BenchmarkDecideBash(b *testing.B) {
	ws := b.TempDir()
	e, _ := NewPolicy(Settings{Rules: mustRules(b, SourceWorkspace,
		"allow bash(git diff:*)", "allow bash(go test:*)", "allow bash(ls:*)", "allow bash(grep:*)",
		"deny bash(rm -rf:*)", "deny bash(curl:*)", "ask bash(git push:*)", "allow read_file(src/**)",
		"deny edit_file(/etc/**)", "allow mcp__github__*", "allow web_fetch(domain:go.dev)", "allow bash(cat:*)")})
	req := bashReq(ws, `git diff --stat && go test ./... 2>&1 | grep -v "^ok" > out.txt`)
	for b.Loop() {
		if o, _ := e.Decide(context.Background(), req); o.Decision != DecisionAllow {
			b.Fatal(o)
		}
	}
}

// BenchmarkDecideRead measures one decision on a file read.
func BenchmarkDecideRead(b *testing.B) {
	ws := b.TempDir()
	e, _ := NewPolicy(Settings{})
	req := readReq(ws, "src/main.go")
	for b.Loop() {
		_, _ = e.Decide(context.Background(), req)
	}
}

// BenchmarkDecideWorst measures the largest command the analysis accepts
// (just under shellparse.MaxSize): the bound of one decision.
func BenchmarkDecideWorst(b *testing.B) {
	ws := b.TempDir()
	e, _ := NewPolicy(Settings{Rules: mustRules(b, SourceWorkspace, "allow bash(cat:*)", "deny bash(rm:*)")})
	var sb strings.Builder
	sb.WriteString("cat")
	for i := 0; sb.Len() < shellparse.MaxSize-16; i++ {
		fmt.Fprintf(&sb, " f%d", i)
	}
	req := bashReq(ws, sb.String())
	for b.Loop() {
		if o, _ := e.Decide(context.Background(), req); o.Decision != DecisionAsk {
			b.Fatal(o)
		}
	}
}
