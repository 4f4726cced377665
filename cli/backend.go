package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/memory"
	"github.com/reinhq/rein/permission"
)

var _ tui.Backend = (*engine)(nil)

// Info implements tui.Backend.
func (e *engine) Info() tui.Info {
	u, cost := e.Usage()
	return tui.Info{Model: e.Model().Label, SessionID: e.SessionID(), WorkDir: e.Workspace().Root,
		PermissionMode: string(e.Policy().Mode()), CostUSD: cost, Tokens: u.PromptTokens() + u.OutputTokens}
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
		return e.memoryCommand(ctx, args)
	case "jobs":
		return e.jobsCommand(ctx, args)
	case "permission-mode":
		return e.modeCommand(args)
	case "plan":
		return e.modeCommand(string(permission.ModePlan))
	case "sandbox":
		return e.sandboxText()
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

// memoryCommand is /memory (SPEC CLI-2, MEM-4): without arguments it
// shows what the system prompt holds — AGENTS.md, and memory with each
// file's fill; "add TEXT" adds a note (the workspace's, else the user's),
// "rm TEXT" removes the note containing TEXT, through the same checks as
// the memory tool. New runs of the session see the change.
func (e *engine) memoryCommand(ctx context.Context, args string) (string, error) {
	verb, text, _ := strings.Cut(strings.TrimSpace(args), " ")
	text = strings.TrimSpace(text)
	store := e.Memory()
	if verb != "" && store == nil {
		return "", fmt.Errorf("memory is off here (the memory setting, or no memory directory)")
	}
	scope := memory.ScopeUser
	if store != nil {
		scope = store.DefaultScope(memory.TargetNotes)
	}
	switch verb {
	case "":
		return e.memoryText()
	case "add":
		if text == "" {
			return "", fmt.Errorf("/memory add TEXT: say what to remember")
		}
		ch, err := store.Add(ctx, scope, memory.TargetNotes, text)
		if err != nil {
			return "", err
		}
		return ch.String() + "; the next message's run sees it.", nil
	case "rm", "remove":
		if text == "" {
			return "", fmt.Errorf("/memory rm TEXT: a part of the note to remove")
		}
		ch, err := store.Remove(ctx, scope, memory.TargetNotes, text)
		if err != nil {
			return "", err
		}
		return ch.String(), nil
	}
	return "", fmt.Errorf("/memory takes add TEXT or rm TEXT (the profile and editing: rein memory edit)")
}

// memoryText shows what the system prompt holds of the workspace's
// instructions and of memory.
func (e *engine) memoryText() (string, error) {
	ws := e.Workspace()
	text, name, err := ws.Instructions()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if name == "" {
		b.WriteString("No AGENTS.md (or CLAUDE.md) in " + ws.Root + "; rein init writes a template. It goes into the system prompt verbatim.\n")
	} else {
		fmt.Fprintf(&b, "%s/%s (%d lines) is in the system prompt, verbatim. Edit the file; new sessions read it again.\n",
			ws.Root, name, strings.Count(text, "\n"))
	}
	store := e.Memory()
	if store == nil {
		b.WriteString("\nMemory is off (memory: off, or no memory directory).")
		return b.String(), nil
	}
	snap := store.Snapshot()
	b.WriteString("\n**Memory** (shown at the start of every run; /memory add TEXT, /memory rm TEXT, rein memory edit):\n")
	for _, f := range snap.Files {
		fmt.Fprintf(&b, "\n- %s — `%s`\n", f.Fill(), f.Path)
		for _, en := range f.Entries {
			mark := ""
			if !en.Shown() {
				mark = " *(left out of the prompt)*"
			}
			fmt.Fprintf(&b, "  - %s%s\n", strings.ReplaceAll(strings.TrimSpace(en.Text), "\n", " "), mark)
		}
	}
	for _, w := range snap.Warnings {
		fmt.Fprintf(&b, "\nWarning: %s\n", w)
	}
	return b.String(), nil
}
