// Command tuidemo runs the interactive session of package tui against a
// scripted backend: every prompt gets a streamed markdown answer, a bash
// call that asks for permission, and a final answer. The tmux end-to-end
// test of package tui drives it; it is also handy to try the UI by hand:
//
//	go run ./cli/tui/internal/tuidemo
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"iter"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
)

func main() {
	askTimeout := flag.Duration("ask-timeout", 5*time.Minute, "how long a permission question waits")
	delay := flag.Duration("delay", 15*time.Millisecond, "pause between streamed pieces")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	b := &backend{delay: *delay, info: tui.Info{
		Model: "demo-model", SessionID: "demo1", WorkDir: "~/src/demo", PermissionMode: "default",
	}}
	err := tui.Run(ctx, tui.Options{Backend: b, AskTimeout: *askTimeout, History: []string{"an older prompt"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "tuidemo:", err)
		os.Exit(1)
	}
}

// backend is a scripted tui.Backend.
type backend struct {
	delay time.Duration
	mu    sync.Mutex // guards info and runs
	info  tui.Info
	runs  int
}

// Info implements tui.Backend.
func (b *backend) Info() tui.Info {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.info
}

// Command implements tui.Backend.
func (b *backend) Command(_ context.Context, name, args string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch name {
	case "cost":
		return fmt.Sprintf("**Session cost:** $%.4f (%d tokens)", b.info.CostUSD, b.info.Tokens), nil
	case "model":
		if args != "" {
			b.info.Model = args
		}
		return "Model: `" + b.info.Model + "`", nil
	}
	return fmt.Sprintf("/%s %s: done", name, args), nil
}

const plan = "## Plan\n\nI'll run the **test suite** first:\n\n1. run `go test ./...`\n2. report what fails\n"

// Submit implements tui.Backend: plan, a bash call that asks, a result.
func (b *backend) Submit(ctx context.Context, _ tui.Prompt, ap permission.Approver) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		b.mu.Lock()
		b.runs++
		s := &script{ctx: ctx, yield: yield, delay: b.delay, runID: fmt.Sprintf("r%d", b.runs)}
		b.mu.Unlock()
		reason, text := s.play(ap)
		usage := llm.Usage{InputTokens: 2400, OutputTokens: 120}
		if reason == agent.ReasonCompleted {
			b.mu.Lock()
			b.info.Tokens += usage.InputTokens + usage.OutputTokens
			b.info.CostUSD += 0.0096
			b.mu.Unlock()
		}
		s.emit(agent.Event{Type: agent.EventDone, Done: &agent.DoneEvent{
			Reason: reason, Text: text, Turns: 2, Usage: usage, CostUSD: 0.0096,
		}})
	}
}

// script plays one run.
type script struct {
	ctx   context.Context
	yield func(agent.Event, error) bool
	delay time.Duration
	runID string
	gone  bool
}

// emit yields ev unless the consumer is gone.
func (s *script) emit(ev agent.Event) bool {
	if s.gone {
		return false
	}
	ev.Time, ev.SessionID, ev.RunID = time.Now(), "demo1", s.runID
	if !s.yield(ev, nil) {
		s.gone = true
	}
	return !s.gone
}

// stream yields text as deltas of a few characters, pausing between them.
func (s *script) stream(typ agent.EventType, text string) bool {
	for len(text) > 0 {
		n := min(6, len(text))
		if !s.emit(agent.Event{Type: typ, Text: text[:n]}) {
			return false
		}
		text = text[n:]
		select {
		case <-s.ctx.Done():
			return false
		case <-time.After(s.delay):
		}
	}
	return true
}

// play runs the script and returns how it ended.
func (s *script) play(ap permission.Approver) (agent.Reason, string) {
	s.emit(agent.Event{Type: agent.EventRunStart, RunStart: &agent.RunStart{Model: "demo-model", MaxTurns: 100}})
	if !s.stream(agent.EventThinkingDelta, "The user wants the tests run. Plan first, then call bash.") ||
		!s.stream(agent.EventTextDelta, plan) {
		return agent.ReasonCancelled, ""
	}
	s.emit(agent.Event{Type: agent.EventMessage, Turn: 1, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.Text{Text: plan}}}})
	input := json.RawMessage(`{"command":"go test ./..."}`)
	s.emit(agent.Event{Type: agent.EventToolStart, Turn: 1, Tool: &agent.ToolEvent{ID: "call_1", Name: "bash", Input: input}})
	req := permission.Request{Tool: "bash", Input: input, CallID: "call_1"}
	s.emit(agent.Event{Type: agent.EventPermissionRequest, Turn: 1, Permission: &agent.PermissionEvent{CallID: "call_1", Tool: "bash", Input: input, Reason: "bash asks in default mode"}})
	v, err := ap.Approve(s.ctx, permission.Prompt{Request: req, Reason: "bash asks in default mode", Suggested: permission.Suggest(req)})
	if err != nil || s.ctx.Err() != nil {
		s.emit(agent.Event{Type: agent.EventToolEnd, Turn: 1, Tool: &agent.ToolEvent{ID: "call_1", Name: "bash", IsError: true, Outcome: "interrupted"}})
		return agent.ReasonCancelled, ""
	}
	decision := agent.Allow
	if v.Answer == permission.AnswerDeny {
		decision = "deny"
	}
	by := agent.ByUser
	if v.TimedOut {
		by = "timeout"
	}
	s.emit(agent.Event{Type: agent.EventPermissionDecision, Turn: 1, Permission: &agent.PermissionEvent{CallID: "call_1", Tool: "bash", Decision: decision, By: by, Always: v.Answer == permission.AnswerAlways}})
	final := "All tests pass: **3 packages** ok."
	if decision == "deny" {
		s.emit(agent.Event{Type: agent.EventToolEnd, Turn: 1, Tool: &agent.ToolEvent{ID: "call_1", Name: "bash", IsError: true, Outcome: "denied", Output: "the user denied this call"}})
		final = "I did not run the tests, since you denied it."
	} else {
		out := strings.Join([]string{"ok  \tgithub.com/demo/agent\t0.412s", "ok  \tgithub.com/demo/tool\t0.101s", "ok  \tgithub.com/demo/llm\t0.230s"}, "\n")
		s.emit(agent.Event{Type: agent.EventToolEnd, Turn: 1, Tool: &agent.ToolEvent{ID: "call_1", Name: "bash", Output: out, DurationMS: 1234, Outcome: "ok"}})
	}
	s.emit(agent.Event{Type: agent.EventUsage, Turn: 1, Usage: &agent.UsageEvent{Run: llm.Usage{InputTokens: 1200, OutputTokens: 60}, CostUSD: 0.0048}})
	if !s.stream(agent.EventTextDelta, final) {
		return agent.ReasonCancelled, ""
	}
	s.emit(agent.Event{Type: agent.EventMessage, Turn: 2, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.Text{Text: final}}}})
	return agent.ReasonCompleted, final
}
