package permission_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
)

// ExampleNewPolicy builds the policy of a settings layer and decides on
// calls (SPEC PERM-1, PERM-2): deny rules win over everything, allow rules
// let a call run without asking, and what no rule covers falls to the
// mode's default for the tool's category. Shell commands are parsed, so an
// allow rule for `git diff` does not cover `git diff; rm -rf x`.
func ExampleNewPolicy() {
	settings, err := permission.ParseSettings([]byte(`
permissions:
  mode: default
  allow: ["bash(git diff:*)", "bash(go test:*)"]
  deny: ["bash(rm:*)", "web_fetch(domain:internal.example.com)"]
`), permission.SourceWorkspace)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	policy, err := permission.NewPolicy(settings)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	shell := tool.Meta{Category: tool.CategoryExecute}
	calls := []permission.Request{
		{Tool: "bash", Meta: shell, Input: json.RawMessage(`{"command":"git diff --stat"}`)},
		{Tool: "bash", Meta: shell, Input: json.RawMessage(`{"command":"go test ./..."}`)},
		{Tool: "bash", Meta: shell, Input: json.RawMessage(`{"command":"git diff; rm -rf build"}`)},
		{Tool: "bash", Meta: shell, Input: json.RawMessage(`{"command":"git diff && make release"}`)},
		{Tool: "web_fetch", Meta: tool.Meta{ReadOnly: true, Category: tool.CategoryNetwork}, Input: json.RawMessage(`{"url":"https://internal.example.com/admin"}`)},
		{Tool: "read_file", Meta: tool.Meta{ReadOnly: true, Category: tool.CategoryRead}, Input: json.RawMessage(`{"path":"README.md"}`)},
		{Tool: "read_file", Meta: tool.Meta{ReadOnly: true, Category: tool.CategoryRead}, Input: json.RawMessage(`{"path":".env"}`)},
	}
	for _, c := range calls {
		c.WorkDir = "/home/ada/project"
		o, err := policy.Decide(context.Background(), c)
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Printf("%s %s → %s (%s)\n", c.Tool, c.Input, o.Decision, o.Reason)
	}
	// Output:
	// bash {"command":"git diff --stat"} → allow (allowed by the workspace rule bash(git diff:*))
	// bash {"command":"go test ./..."} → allow (allowed by the workspace rule bash(go test:*))
	// bash {"command":"git diff; rm -rf build"} → deny (bash denied by the workspace rule bash(rm:*))
	// bash {"command":"git diff && make release"} → ask (default mode asks before execute tools such as bash)
	// web_fetch {"url":"https://internal.example.com/admin"} → deny (web_fetch denied by the workspace rule web_fetch(domain:internal.example.com))
	// read_file {"path":"README.md"} → allow (default mode runs read tools inside the workspace)
	// read_file {"path":".env"} → deny (read_file on .env is denied: it is a sensitive file (matches .env) that rein never lets tools read or change)
}
