package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/workspace"
)

// sessionHooks are the conversation's hooks as its runs and its front end
// fire them (SPEC COMPAT-1): every input gets the session's transcript
// (transcript_path) and the run's permission mode, as Claude Code's
// scripts expect, and what a hook says to the user (systemMessage) is
// shown as a notice.
type sessionHooks struct{ c *Conversation }

// Has implements agent.Hooks.
func (h sessionHooks) Has(ev hook.Event) bool { return h.c.hooks.Has(ev) }

// Fire implements agent.Hooks.
func (h sessionHooks) Fire(ctx context.Context, ev hook.Event, in hook.Input) (hook.Outcome, error) {
	c := h.c
	if in.TranscriptPath == "" {
		in.TranscriptPath = c.transcript(ctx)
	}
	if in.PermissionMode == "" {
		in.PermissionMode = c.permissionMode()
	}
	out, err := c.hooks.Fire(ctx, ev, in)
	if out.SystemMessage != "" {
		c.hookNoteMu.Lock()
		c.s.note("hook (%s): %s", ev, out.SystemMessage)
		c.hookNoteMu.Unlock()
	}
	return out, err
}

// permissionMode is the mode of the conversation's runs as hooks hear it:
// rein's name (hook.Input maps it to Claude Code's for its hooks), or
// dontAsk for a main agent declared so.
func (c *Conversation) permissionMode() string {
	if m := c.s.main; m != nil && m.PermissionMode == workspace.AgentModeDontAsk {
		return "dontAsk"
	}
	return string(c.s.policy.Mode())
}

// transcript returns the absolute path of a file holding the session's
// entries so far, one JSON object a line (session.Entry), "" before the
// session is bound or when none can be written. A store that keeps its
// log in such a file (session/jsonl: <dir>/<id>.jsonl, the CLI's) gives
// it directly; for the others the entries are copied to transcript.jsonl
// in the session's directory, appending what is new since the last hook,
// so a script reads the conversation whatever the store. Like Claude
// Code's, it may lag the run by the entries not yet journaled.
func (c *Conversation) transcript(ctx context.Context) string {
	id := c.SessionID()
	if id == "" || c.sessDir == "" {
		return ""
	}
	if d, ok := c.s.cfg.Store.(interface{ Dir() string }); ok {
		p := filepath.Join(d.Dir(), id+".jsonl")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
		}
	}
	p, err := filepath.Abs(filepath.Join(c.sessDir, "transcript.jsonl"))
	if err != nil {
		return ""
	}
	c.transcriptMu.Lock()
	defer c.transcriptMu.Unlock()
	if err := c.exportTranscript(ctx, id, p); err != nil {
		c.s.logger.Warn("hooks get no transcript", "session_id", id, "err", err)
		return ""
	}
	return p
}

// exportTranscript appends to path the entries of session id after the
// last one it wrote.
func (c *Conversation) exportTranscript(ctx context.Context, id, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil { // the session's directory, made lazily
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	last := c.transcriptSeq
	var werr error
	for e, err := range c.s.cfg.Store.Entries(ctx, id, last) {
		if err != nil {
			werr = err
			break
		}
		if e.Seq <= last {
			continue // a damage report (Seq 0), or what was written before
		}
		if werr = enc.Encode(&e); werr != nil {
			break
		}
		last = e.Seq
	}
	if err := w.Flush(); werr == nil {
		werr = err
	}
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		return fmt.Errorf("transcript for hooks: %w", werr)
	}
	c.transcriptSeq = last
	return nil
}
