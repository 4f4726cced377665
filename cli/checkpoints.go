package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/checkpoint"
	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/session"
)

// The terminal UI's checkpoints (SPEC CLI-6): before each prompt the
// engine begins a checkpoint in the session's directory; the file tools'
// changes are saved before they run; /rewind puts the code back, or forks
// the conversation before the prompt, or both.

var _ tui.Checkpointer = (*engine)(nil)

// fileTools are the tools whose "path" input is a file they change.
var fileTools = map[string]bool{"write_file": true, "edit_file": true, "multi_edit": true}

// checkpoints opens the bound session's checkpoint store. Its state is
// its index, read on each open, so nothing is kept between calls.
func (e *engine) checkpoints() (*checkpoint.Store, error) {
	sid := e.SessionID()
	if sid == "" {
		return nil, fmt.Errorf("no session yet: send a prompt first")
	}
	return checkpoint.Open(e.checkpointDir(sid))
}

// checkpointDir is where session sid keeps its checkpoints: its own
// directory, outside the workspace and its .git.
func (e *engine) checkpointDir(sid string) string {
	return filepath.Join(e.store.Dir(), sid, "checkpoints")
}

// BeginPrompt implements tui.Checkpointer: a checkpoint for the prompt,
// marked with the session's last entry (where a rewound conversation is
// forked).
func (e *engine) BeginPrompt(ctx context.Context, text string) error {
	if err := e.ensureSession(ctx); err != nil {
		return err
	}
	s, err := e.checkpoints()
	if err != nil {
		return err
	}
	var last int64
	for en, err := range e.store.Entries(ctx, e.SessionID(), 0) {
		if err != nil {
			return err
		}
		last = en.Seq
	}
	_, err = s.Begin(session.PreviewOf(text), last, e.app.now())
	return err
}

// Observe implements tui.Checkpointer: a file tool's target is saved
// before the tool runs (tool_start is yielded before the call), a shell
// command is noted. Sub-agents' calls are not tracked.
func (e *engine) Observe(ev agent.Event) {
	if ev.Type != agent.EventToolStart || ev.Tool == nil || ev.Subagent != nil || e.SessionID() == "" {
		return
	}
	var in struct {
		Path    string `json:"path"`
		Command string `json:"command"`
	}
	_ = json.Unmarshal(ev.Tool.Input, &in)
	if !(fileTools[ev.Tool.Name] && in.Path != "") && !(ev.Tool.Name == "bash" && in.Command != "") {
		return
	}
	s, err := e.checkpoints()
	if err != nil {
		e.logger.Warn("checkpoint: the store did not open", "err", err)
		return
	}
	switch {
	case fileTools[ev.Tool.Name] && in.Path != "":
		p := in.Path
		if !filepath.IsAbs(p) {
			p = filepath.Join(e.Workspace().Root, p)
		}
		if err := s.Track(filepath.Clean(p)); err != nil {
			e.logger.Warn("checkpoint: a file was not saved", "path", p, "err", err)
		}
	case ev.Tool.Name == "bash" && in.Command != "":
		_ = s.NoteShell(in.Command)
	}
}

// Checkpoints implements tui.Checkpointer.
func (e *engine) Checkpoints(context.Context) ([]checkpoint.Point, error) {
	if e.SessionID() == "" {
		return nil, nil
	}
	s, err := e.checkpoints()
	if err != nil {
		return nil, err
	}
	return s.Points(), nil
}

// Rewind implements tui.Checkpointer: code puts the files back as they
// were before checkpoint seq; conversation forks the session before its
// prompt into a new session and continues there (the old one is kept).
func (e *engine) Rewind(ctx context.Context, seq int, code, conversation bool) (string, error) {
	s, err := e.checkpoints()
	if err != nil {
		return "", err
	}
	var point *checkpoint.Point
	for _, p := range s.Points() {
		if p.Seq == seq {
			point = &p
		}
	}
	if point == nil {
		return "", fmt.Errorf("no checkpoint %d; /rewind lists them", seq)
	}
	var b strings.Builder
	if code {
		ch, err := s.Restore(seq)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "Code restored to before %q: %d file(s) put back, %d removed.", point.Prompt, len(ch.Restored), len(ch.Removed))
		for _, f := range ch.Untracked {
			fmt.Fprintf(&b, "\n- not restored: %s (%s)", f.Path, f.Untracked)
		}
		if len(ch.Shell) > 0 {
			fmt.Fprintf(&b, "\n- not undone: the effects of %d shell command(s) run since (%s)", len(ch.Shell), clip(strings.Join(ch.Shell, "; "), 120))
		}
	}
	if conversation {
		old := e.SessionID()
		fork, err := e.store.Fork(ctx, old, point.Mark)
		if err != nil {
			return "", err
		}
		if _, err := s.CopyTo(e.checkpointDir(fork.ID), seq); err != nil {
			return "", err
		}
		e.Unbind()
		if err := e.resume(ctx, fork.ID, false); err != nil {
			return "", fmt.Errorf("the conversation was forked into %s but could not be resumed: %w (rein --resume %s)", fork.ID, err, fork.ID)
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "Conversation rewound to before %q: you are in session %s now (the full one stays as %s).", point.Prompt, fork.ID, old)
	}
	return b.String(), nil
}
