package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
)

// sink writes a run's events in one output format.
type sink interface {
	event(ev agent.Event) error
}

// newSink returns the writer of format (text, json or stream-json). In text
// format, progress (tool calls, retries, compactions) goes to stderr when
// progress is set, and a spinner shows waits when spin is set.
func newSink(format string, stdout, stderr io.Writer, progress, spin bool, model string) sink {
	switch format {
	case "json":
		return &jsonSink{w: stdout, model: model}
	case "stream-json":
		return &streamSink{w: stdout}
	}
	s := &textSink{out: stdout, err: stderr, progress: progress}
	if spin {
		s.spin = &spinner{w: stderr}
	}
	return s
}

// streamSink writes every event as one line of JSON: exactly agent.Event's
// encoding (docs/events.md).
type streamSink struct{ w io.Writer }

func (s *streamSink) event(ev agent.Event) error {
	line, err := jsonLine(ev)
	if err != nil {
		return err
	}
	_, err = s.w.Write(line)
	return err
}

// result is the one object of --output json.
type result struct {
	Type       string       `json:"type"`
	SessionID  string       `json:"session_id,omitempty"`
	RunID      string       `json:"run_id,omitempty"`
	Model      string       `json:"model,omitempty"`
	Reason     agent.Reason `json:"reason"`
	ExitCode   int          `json:"exit_code"`
	Text       string       `json:"text"`
	Error      string       `json:"error,omitempty"`
	Turns      int          `json:"turns"`
	Usage      llm.Usage    `json:"usage"`
	CostUSD    float64      `json:"cost_usd"`
	DurationMS int64        `json:"duration_ms"`
	Stats      agent.Stats  `json:"stats"`
	// Plan is the plan a plan-mode run stopped at (reason plan_ready).
	Plan string `json:"plan,omitempty"`
}

// jsonSink writes one object when the run is done.
type jsonSink struct {
	w     io.Writer
	model string
}

func (s *jsonSink) event(ev agent.Event) error {
	if ev.Type != agent.EventDone || ev.Done == nil {
		return nil
	}
	d := ev.Done
	line, err := jsonLine(result{Type: "result", SessionID: ev.SessionID, RunID: ev.RunID, Model: s.model,
		Reason: d.Reason, ExitCode: exitCode(d.Reason), Text: d.Text, Error: d.Error, Turns: d.Turns,
		Usage: d.Usage, CostUSD: d.CostUSD, DurationMS: d.DurationMS, Stats: d.Stats, Plan: d.Plan})
	if err != nil {
		return err
	}
	_, err = s.w.Write(line)
	return err
}

// textSink prints the final answer on stdout and, when progress is set,
// the work on the way on stderr: one line per tool call, retries,
// compactions and non-fatal errors; spin, when set, shows what rein waits
// for in between.
type textSink struct {
	out, err io.Writer
	progress bool
	spin     *spinner
}

func (s *textSink) event(ev agent.Event) error {
	switch ev.Type {
	case agent.EventDone:
		s.spin.stop()
		if d := ev.Done; d != nil && d.Reason == agent.ReasonPlanReady && d.Plan != "" {
			_, err := io.WriteString(s.out, strings.TrimRight(d.Plan, "\n")+"\n") // the plan is the answer (PERM-7)
			return err
		}
		if d := ev.Done; d != nil && d.Text != "" {
			_, err := io.WriteString(s.out, strings.TrimRight(d.Text, "\n")+"\n")
			return err
		}
		return nil
	case agent.EventError:
		if e := ev.Error; e != nil && !e.Fatal {
			s.spin.stop()
			fmt.Fprintf(s.err, "rein: %s\n", e.Message)
		}
	case agent.EventPermissionRequest:
		s.spin.stop() // the question is asked on this terminal
	}
	// A retry is always said, at once: a model that cannot be reached
	// must not cost minutes of silence (SPEC CLI-4).
	if s.progress || ev.Type == agent.EventRetry {
		if line := progressLine(ev); line != "" {
			if sub := ev.Subagent; sub != nil {
				line = strings.Repeat("  ", sub.Depth) + "[" + sub.Agent + "] " + strings.TrimLeft(line, " ")
			}
			s.spin.stop()
			fmt.Fprintln(s.err, line)
		}
	}
	if label := waitLabel(ev); label != "" {
		s.spin.start(label)
	}
	return nil
}

// waitLabel says what rein waits for after ev, "" when the wait shown so
// far goes on.
func waitLabel(ev agent.Event) string {
	switch ev.Type {
	case agent.EventRunStart:
		return "waiting for the model"
	case agent.EventMessage:
		if ev.Message != nil && ev.Message.Role == llm.RoleUser {
			return "waiting for the model"
		}
	case agent.EventTextDelta, agent.EventThinkingDelta:
		return "the model is answering"
	case agent.EventToolStart:
		if ev.Tool != nil {
			return "running " + ev.Tool.Name
		}
	case agent.EventPermissionDecision:
		if p := ev.Permission; p != nil && p.Decision == "allow" {
			return "running " + p.Tool
		}
	case agent.EventRetry:
		return "waiting to retry"
	}
	return ""
}

// progressLine describes an event in one line, or "" for events not shown.
func progressLine(ev agent.Event) string {
	switch ev.Type {
	case agent.EventSubagentStart:
		if sub := ev.Subagent; sub != nil {
			return "▸ agent " + sub.Agent + " started"
		}
	case agent.EventSubagentEnd:
		if d := ev.Done; d != nil {
			return fmt.Sprintf("◂ %s after %d turns", d.Reason, d.Turns)
		}
	case agent.EventMessage:
		if m := ev.Message; m != nil && m.Role == llm.RoleAssistant && len(m.ToolUses()) > 0 {
			if text := strings.TrimSpace(m.TextOf()); text != "" {
				return "· " + clip(text, 120)
			}
		}
	case agent.EventToolStart:
		if t := ev.Tool; t != nil {
			if s := inputSummary(t.Input); s != "" {
				return fmt.Sprintf("▸ %s %s", t.Name, clip(s, 100))
			}
			return "▸ " + t.Name
		}
	case agent.EventToolEnd:
		if t := ev.Tool; t != nil && t.Outcome != "ok" {
			return fmt.Sprintf("  ✗ %s %s: %s", t.Name, t.Outcome, clip(t.Output, 100))
		}
	case agent.EventRetry:
		if r := ev.Retry; r != nil {
			return fmt.Sprintf("  ↻ attempt %d failed (%s); retrying in %.1fs", r.Attempt, clip(r.Message, 240), float64(r.DelayMS)/1000)
		}
	case agent.EventCompaction:
		if c := ev.Compaction; c != nil {
			return fmt.Sprintf("  ⇣ compacted the conversation: %d → %d tokens (%s)", c.TokensBefore, c.TokensAfter, strings.Join(c.Layers, ", "))
		}
	case agent.EventPermissionDecision:
		if p := ev.Permission; p != nil && p.Decision == "deny" {
			return fmt.Sprintf("  ✗ %s denied (%s)", p.Tool, p.By)
		}
	}
	return ""
}

// endMessage is what stderr says about a run that did not complete, with
// the next thing to do.
func endMessage(d *agent.DoneEvent, sessionID string) string {
	why := d.Error
	if why != "" {
		why = ": " + why
	}
	resume := ""
	if sessionID != "" {
		resume = fmt.Sprintf("\nThe session is %s; go on with: rein run --resume %s \"…\"", sessionID, sessionID)
	}
	switch d.Reason {
	case agent.ReasonMaxTurns:
		return fmt.Sprintf("stopped after %d turns (--max-turns)%s", d.Turns, resume)
	case agent.ReasonPermissionDenied:
		return fmt.Sprintf("a permission denial ended the run%s\nAllow the tool with --allowed-tools, a permission rule in .rein/settings.yaml, or --permission-mode.", why)
	case agent.ReasonContextOverflow:
		return fmt.Sprintf("the conversation no longer fits the model's context window%s\nStart a new session, or use a model with a larger window.", why)
	case agent.ReasonTimeout:
		return fmt.Sprintf("the run ran out of time%s\nRaise --timeout (or REIN_TIMEOUT).%s", why, resume)
	case agent.ReasonMaxTokens:
		return fmt.Sprintf("the reply hit the output token limit%s\nRaise max_tokens (REIN_MAX_TOKENS), or ask for less at a time.%s", why, resume)
	case agent.ReasonRefusal:
		return "the model refused to answer" + why
	case agent.ReasonCancelled:
		return "cancelled" + resume
	case agent.ReasonPlanReady:
		msg := "plan mode: the run stopped at its plan (above), which waits for your approval"
		if sessionID != "" {
			msg += fmt.Sprintf("\nApprove it with: rein run --resume %s --permission-mode accept-edits \"The plan is approved: carry it out.\""+
				"\n(or --permission-mode default to confirm each edit); or send feedback with --permission-mode plan", sessionID)
		}
		return msg
	}
	return "the run failed" + why + resume
}

// writeJSON writes v as indented JSON with a trailing newline.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
