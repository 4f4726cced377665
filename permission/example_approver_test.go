package permission_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
)

// deskApprover is a custom permission.Approver: where rein's CLI asks the
// user at the terminal and `rein serve` asks an HTTP client, this one
// answers by a rule of its own — notes may be written, always; anything
// else is refused with a message for the model.
type deskApprover struct{}

// Approve answers one question. It must return once ctx is done; this one
// never waits.
func (deskApprover) Approve(ctx context.Context, p permission.Prompt) (permission.Verdict, error) {
	var suggested []string
	for _, r := range p.Suggested {
		suggested = append(suggested, r.String())
	}
	fmt.Printf("approver: %s %s? (%s; always would keep %s)\n", p.Request.Tool, p.Request.Input, p.Reason, strings.Join(suggested, ", "))
	if p.Request.Tool == "write_note" {
		return permission.Verdict{Answer: permission.AnswerAlways}, nil
	}
	return permission.Verdict{Answer: permission.AnswerDeny, Message: "ask the user to do this by hand"}, nil
}

// noteIn is the input of the example's tools.
type noteIn struct {
	Name string `json:"name"`
	Text string `json:"text,omitempty"`
}

// Example_approver wires a policy, a custom approver and an auditor into a
// run through agent.Gate (SPEC PERM-1 … PERM-4). The policy asks before
// the edit and execute tools (default mode); the approver allows writing
// notes "always", so the engine keeps a session rule and the second write
// runs without a question; it denies the command, and the model reads why.
// Every call lands in the audit trail.
func Example_approver() {
	policy, err := permission.NewPolicy(permission.Settings{Mode: permission.ModeDefault})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	audit := &permission.MemoryAuditor{}
	gate := &agent.Gate{Policy: policy, Approver: deskApprover{}, Rules: policy, Auditor: audit}

	writeNote := tool.New("write_note", "Writes a note.", tool.Meta{Category: tool.CategoryEdit},
		func(ctx context.Context, call tool.Call, in noteIn) (tool.Result, error) {
			return tool.Text("saved " + in.Name), nil
		})
	publish := tool.New("publish", "Publishes a note to the team.", tool.Meta{Category: tool.CategoryExecute},
		func(ctx context.Context, call tool.Call, in noteIn) (tool.Result, error) {
			return tool.Text("published " + in.Name), nil
		})
	tools, err := tool.NewSet(tool.OriginBuiltin, writeNote, publish)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	model := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "write_note", `{"name":"monday","text":"standup"}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c2", "write_note", `{"name":"tuesday","text":"review"}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c3", "publish", `{"name":"monday"}`)}},
		llmtest.Reply{Text: "Both notes are saved; publishing was refused."},
	)
	a := agent.New(agent.Config{Provider: model, Model: "test-model", Tools: tools, Permissions: gate})
	prompt := llm.UserText("Write my notes and publish them.")
	for ev, err := range a.Run(context.Background(), agent.Input{WorkDir: "/home/ada/notes", Prompt: &prompt}) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch ev.Type {
		case agent.EventPermissionDecision:
			fmt.Printf("decision: %s %s by %s (always: %v)\n", ev.Permission.Tool, ev.Permission.Decision, ev.Permission.By, ev.Permission.Always)
		case agent.EventToolEnd:
			fmt.Printf("tool_end %s %s: %s\n", ev.Tool.Name, ev.Tool.Outcome, ev.Tool.Output)
		case agent.EventDone:
			fmt.Println("answer:", ev.Done.Text)
		}
	}
	for _, r := range policy.Rules() {
		fmt.Println("rule kept:", r.String(), r.Source)
	}
	for _, r := range audit.Records() {
		fmt.Println("audit:", r.Tool, r.Decision, r.DecidedBy, r.Outcome)
	}
	// Output:
	// approver: write_note {"name":"monday","text":"standup"}? (default mode asks before edit tools such as write_note; always would keep write_note)
	// decision: write_note allow by user (always: true)
	// tool_end write_note ok: saved monday
	// tool_end write_note ok: saved tuesday
	// approver: publish {"name":"monday"}? (default mode asks before execute tools such as publish; always would keep publish)
	// decision: publish deny by user (always: false)
	// tool_end publish denied: permission denied by the user: ask the user to do this by hand
	// answer: Both notes are saved; publishing was refused.
	// rule kept: write_note session
	// audit: write_note allow user ok
	// audit: write_note allow policy ok
	// audit: publish deny user denied
}
