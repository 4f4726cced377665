package cli

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/workspace"
)

var _ tui.Backend = (*engine)(nil)

// Info implements tui.Backend.
func (e *engine) Info() tui.Info {
	u, cost := e.Usage()
	return tui.Info{Model: e.Model().Label, SessionID: e.SessionID(), WorkDir: e.Workspace().Root,
		PermissionMode: string(e.Policy().Mode()), CostUSD: cost, Tokens: u.PromptTokens() + u.OutputTokens}
}

// Submit implements tui.Backend: a run with a new id.
func (e *engine) Submit(ctx context.Context, prompt string, approver permission.Approver) iter.Seq2[agent.Event, error] {
	return e.Engine.Submit(ctx, "", prompt, approver)
}

// Command implements tui.Backend: the slash commands of the interactive
// session (SPEC CLI-2).
func (e *engine) Command(ctx context.Context, name, args string) (string, error) {
	args = strings.TrimSpace(args)
	switch name {
	case "compact":
		if args != "" {
			return "", fmt.Errorf("/compact takes no instructions yet: run /compact alone")
		}
		return e.compactNow(ctx)
	case "clear":
		return e.clear(), nil
	case "model":
		return e.switchModel(args)
	case "resume":
		if args == "" {
			return e.sessionList(ctx)
		}
		return e.resumeCommand(ctx, args)
	case "sessions":
		return e.sessionList(ctx)
	case "cost":
		return e.costText(), nil
	case "memory":
		if args != "" {
			return "", fmt.Errorf("/memory takes no text yet: add it to %s", e.memoryFile())
		}
		return e.memoryText()
	}
	return "", fmt.Errorf("unknown command /%s; /help lists the commands", name)
}

// compactNow summarises the conversation now (SPEC CTX-5, manual).
func (e *engine) compactNow(ctx context.Context) (string, error) {
	if e.Session() == nil || len(e.History()) == 0 {
		return "Nothing to compact yet.", nil
	}
	rep, err := e.Compact(ctx)
	if err != nil {
		return "", fmt.Errorf("compaction failed: %w", err)
	}
	if rep == nil {
		return "The conversation is too short to compact.", nil
	}
	return fmt.Sprintf("Compacted the conversation: %d → %d tokens (%s).", rep.TokensBefore, rep.TokensAfter,
		strings.Join(rep.Layers, ", ")), nil
}

// clear starts a new session; the old one stays on disk.
func (e *engine) clear() string {
	old := e.SessionID()
	e.Unbind()
	if old == "" {
		return "Started a new conversation."
	}
	return fmt.Sprintf("Started a new conversation. The previous one is session %s (/resume %s).", old, old)
}

// switchModel changes the model of the next runs.
func (e *engine) switchModel(spec string) (string, error) {
	if spec == "" {
		return fmt.Sprintf("Model: %s. Switch with /model provider/model (rein provider list shows the profiles).", e.Model().Label), nil
	}
	if e.cassette != nil {
		return "", fmt.Errorf("the model cannot change while a cassette is recorded (--record %s)", e.record)
	}
	if err := e.useModel(spec); err != nil {
		return "", err
	}
	return "Model: " + e.Model().Label + ".", nil
}

// resumeCommand switches to another session; notes (healing, left-over
// processes) become part of the answer.
func (e *engine) resumeCommand(ctx context.Context, id string) (string, error) {
	var buf bytes.Buffer
	saved := e.notice
	e.notice = &buf
	defer func() { e.notice = saved }()
	if err := e.resume(ctx, id, false); err != nil {
		return "", err
	}
	msg := fmt.Sprintf("Resumed session %s (%d messages).", e.SessionID(), len(e.History()))
	if buf.Len() > 0 {
		msg += "\n" + strings.TrimSpace(strings.ReplaceAll(buf.String(), "rein: ", ""))
	}
	return msg, nil
}

// sessionList lists the workspace's sessions, newest first.
func (e *engine) sessionList(ctx context.Context) (string, error) {
	list, err := listAll(ctx, e.store, e.Workspace().Root)
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "No sessions in this workspace yet.", nil
	}
	var b strings.Builder
	b.WriteString("Sessions of this workspace (/resume ID):\n")
	for i, s := range list {
		if i == 20 {
			fmt.Fprintf(&b, "… and %d more (rein sessions list)\n", len(list)-i)
			break
		}
		line := "- " + sessionsLine(s)
		if s.ID == e.SessionID() {
			line += " (current)"
		}
		b.WriteString(line + "\n")
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// costText reports the session's usage and cost (SPEC SESS-4).
func (e *engine) costText() string {
	u, cost := e.Usage()
	s := "Session " + e.SessionID()
	if e.Session() == nil {
		s = "This conversation"
	}
	return fmt.Sprintf("%s: %s.", s, usageLine(u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, cost))
}

// memoryText shows what the system prompt carries from the workspace.
// memoryFile is the instructions file of the workspace: AGENTS.md, or
// CLAUDE.md when only that one exists.
func (e *engine) memoryFile() string {
	name := workspace.InstructionFiles[0]
	if _, n, err := e.Workspace().Instructions(); err == nil && n != "" {
		name = n
	}
	return filepath.Join(e.Workspace().Root, name)
}

func (e *engine) memoryText() (string, error) {
	ws := e.Workspace()
	text, name, err := ws.Instructions()
	if err != nil {
		return "", err
	}
	if name == "" {
		return "No AGENTS.md (or CLAUDE.md) in " + ws.Root + "; rein init writes a template. " +
			"It goes into the system prompt verbatim.", nil
	}
	lines := strings.Count(text, "\n")
	return fmt.Sprintf("%s/%s (%d lines) is in the system prompt, verbatim. Edit the file; new sessions read it again.",
		ws.Root, name, lines), nil
}
