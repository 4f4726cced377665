package cli

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/internal/config"
	"github.com/reinhq/rein/llm"
)

var _ tui.Backend = (*engine)(nil)

// Info implements tui.Backend.
func (e *engine) Info() tui.Info {
	e.mu.Lock()
	defer e.mu.Unlock()
	return tui.Info{Model: e.model.Label, SessionID: e.sessionID(), WorkDir: e.ws.Root,
		PermissionMode: string(e.policy.Mode()), CostUSD: e.cost,
		Tokens: e.usage.PromptTokens() + e.usage.OutputTokens}
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
	if e.sess == nil || len(e.history) == 0 {
		return "Nothing to compact yet.", nil
	}
	e.agentFor(nil) // builds the compactor
	req := &llm.Request{Model: e.model.Name, System: e.system, Messages: e.history, Tools: e.tools.Specs(),
		MaxTokens: e.cfg.Effective.Int(config.MaxTokens), CacheKey: e.sess.ID}
	// pre_compact and post_compact fire for a manual compaction as for an
	// automatic one (SPEC HOOK-1); they observe, they cannot stop it.
	e.fireHook(ctx, hook.PreCompact, hook.Input{Trigger: "manual"})
	hist, rep, err := e.compactor.Compact(ctx, req, &e.focus)
	if err != nil {
		return "", fmt.Errorf("compaction failed: %w", err)
	}
	if rep == nil {
		return "The conversation is too short to compact.", nil
	}
	defer e.fireHook(context.WithoutCancel(ctx), hook.PostCompact, hook.Input{Trigger: "manual"})
	rep.Trigger, rep.History = "manual", hist
	ev := agent.Event{Type: agent.EventCompaction, Time: time.Now(), SessionID: e.sess.ID, Compaction: rep}
	if err := e.rec.Record(ctx, ev); err != nil {
		return "", fmt.Errorf("recording the compaction: %w", err)
	}
	e.track(ev)
	return fmt.Sprintf("Compacted the conversation: %d → %d tokens (%s).", rep.TokensBefore, rep.TokensAfter,
		strings.Join(rep.Layers, ", ")), nil
}

// clear starts a new session; the old one stays on disk.
func (e *engine) clear() string {
	old := e.sessionID()
	e.unbind()
	if old == "" {
		return "Started a new conversation."
	}
	return fmt.Sprintf("Started a new conversation. The previous one is session %s (/resume %s).", old, old)
}

// switchModel changes the model of the next runs.
func (e *engine) switchModel(spec string) (string, error) {
	if spec == "" {
		return fmt.Sprintf("Model: %s. Switch with /model provider/model (rein provider list shows the profiles).", e.model.Label), nil
	}
	if e.cassette != nil {
		return "", fmt.Errorf("the model cannot change while a cassette is recorded (--record %s)", e.record)
	}
	old := e.model
	if err := e.useModel(spec); err != nil {
		e.model = old
		return "", err
	}
	return "Model: " + e.model.Label + ".", nil
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
	msg := fmt.Sprintf("Resumed session %s (%d messages).", e.sess.ID, len(e.history))
	if buf.Len() > 0 {
		msg += "\n" + strings.TrimSpace(strings.ReplaceAll(buf.String(), "rein: ", ""))
	}
	return msg, nil
}

// sessionList lists the workspace's sessions, newest first.
func (e *engine) sessionList(ctx context.Context) (string, error) {
	list, err := listAll(ctx, e.store, e.ws.Root)
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
		if s.ID == e.sessionID() {
			line += " (current)"
		}
		b.WriteString(line + "\n")
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// costText reports the session's usage and cost (SPEC SESS-4).
func (e *engine) costText() string {
	e.mu.Lock()
	u, cost := e.usage, e.cost
	e.mu.Unlock()
	s := "Session " + e.sessionID()
	if e.sess == nil {
		s = "This conversation"
	}
	return fmt.Sprintf("%s: %s.", s, usageLine(u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, cost))
}

// memoryText shows what the system prompt carries from the workspace.
// memoryFile is the instructions file of the workspace: AGENTS.md, or
// CLAUDE.md when only that one exists.
func (e *engine) memoryFile() string {
	name := config.InstructionFiles[0]
	if _, n, err := e.ws.Instructions(); err == nil && n != "" {
		name = n
	}
	return filepath.Join(e.ws.Root, name)
}

func (e *engine) memoryText() (string, error) {
	text, name, err := e.ws.Instructions()
	if err != nil {
		return "", err
	}
	if name == "" {
		return "No AGENTS.md (or CLAUDE.md) in " + e.ws.Root + "; rein init writes a template. " +
			"It goes into the system prompt verbatim.", nil
	}
	lines := strings.Count(text, "\n")
	return fmt.Sprintf("%s/%s (%d lines) is in the system prompt, verbatim. Edit the file; new sessions read it again.",
		e.ws.Root, name, lines), nil
}
