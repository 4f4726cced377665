package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/session"
)

// checkEvery is how often a follower looks in the ledger for pending runs
// that ended without it seeing their end (cancelled while queued, a
// subscription that fell behind, a restart).
const checkEvery = 2 * time.Second

// maxHints is how many tool hints the progress message shows.
const maxHints = 5

// follow renders the session's events for the chat's pending runs until
// none is left or ctx ends: progress edits, permission questions and the
// final replies.
func (g *Gateway) follow(ctx context.Context, c *chat, sid string, after int64) {
	defer func() {
		c.mu.Lock()
		again := len(c.runs) > 0 && ctx.Err() == nil // a run added as this follower ended
		c.following = again
		c.last = g.cfg.Now()
		c.mu.Unlock()
		if again && !g.spawn(func(ctx context.Context) { g.follow(ctx, c, sid, after) }) {
			c.mu.Lock()
			c.following = false
			c.mu.Unlock()
		}
	}()
	f := &follower{g: g, c: c, r: c.r, progress: map[string]*progress{}}
	tick := time.NewTicker(min(checkEvery, max(c.r.limits.EditEvery, 100*time.Millisecond)))
	defer tick.Stop()
	lastCheck := time.Time{}
	for {
		sub, err := g.cfg.Bus.Subscribe(ctx, sid, after)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			g.log.Warn("following a chat's session", "chat", c.key, "err", err)
			if !Sleep(ctx, time.Second) {
				return
			}
			continue
		}
	events:
		for {
			select {
			case <-ctx.Done():
				sub.Close()
				return
			case ev, ok := <-sub.Events():
				if !ok {
					break events
				}
				after = ev.ID
				f.handle(ctx, ev)
			case now := <-tick.C:
				f.flush(ctx, now)
				if now.Sub(lastCheck) >= checkEvery {
					lastCheck = now
					f.check(ctx)
				}
			}
			if !c.busy() {
				sub.Close()
				return
			}
		}
		sub.Close()
		if ctx.Err() != nil {
			return
		}
		// Cut off (it fell behind) or the bus went away: what was missed
		// is in the ledger; runs that ended are answered from there.
		if errors.Is(sub.Err(), eventbus.ErrSlow) {
			if last, err := g.cfg.Ledger.LastEventID(ctx, sid); err == nil {
				after = last
			}
		}
		f.check(ctx)
		if !c.busy() {
			return
		}
		if !Sleep(ctx, 200*time.Millisecond) {
			return
		}
	}
}

// follower is the state of one follow loop.
type follower struct {
	g        *Gateway
	c        *chat
	r        *route
	progress map[string]*progress // by run id
}

// progress is the message showing a run's progress, edited as it goes.
type progress struct {
	ref    MessageRef
	sent   bool
	parts  int  // the parts of the final reply the platform took (a restart's: from the state)
	failed bool // the platform refused it: no more edits
	text   strings.Builder
	hints  []string
	// turnEnded: a tool call ended the model's turn; its next text
	// starts a new paragraph.
	turnEnded bool
	dirty     bool
	lastEdit  time.Time
}

// handle renders one event of the session.
func (f *follower) handle(ctx context.Context, ev *eventbus.Event) {
	if !f.c.has(ev.RunID) { // per event, deltas too: no copy of the list
		return
	}
	switch agent.EventType(ev.Type) {
	case agent.EventTextDelta, agent.EventToolStart, agent.EventPermissionRequest, agent.EventPermissionDecision, agent.EventDone:
	default:
		return
	}
	var e agent.Event
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		f.g.log.Warn("an event could not be read", "chat", f.c.key, "type", ev.Type, "err", err)
		return
	}
	if e.Subagent != nil && e.Type != agent.EventPermissionRequest && e.Type != agent.EventPermissionDecision {
		return // a sub-agent's progress stays in its transcript
	}
	p := f.progressOf(ctx, ev.RunID)
	switch e.Type {
	case agent.EventTextDelta:
		p.addText(e.Text)
	case agent.EventToolStart:
		if e.Tool != nil {
			p.addHint(toolHint(e.Tool.Name, e.Tool.Input))
		}
	case agent.EventPermissionRequest:
		if e.Permission != nil {
			f.g.ask(ctx, f.c, ev.RunID, e.Permission)
		}
	case agent.EventPermissionDecision:
		if e.Permission != nil {
			f.g.decided(ctx, ev.RunID, e.Permission)
		}
	case agent.EventDone:
		if e.Done != nil {
			f.finish(ctx, ev.RunID, finalText(e.Done))
		}
		return
	}
	f.flush(ctx, f.g.cfg.Now())
}

// progressOf returns the run's progress message, as far as this
// follower or, before a restart, another one got with it (the state).
func (f *follower) progressOf(ctx context.Context, runID string) *progress {
	p := f.progress[runID]
	if p == nil {
		p = &progress{}
		d, err := f.g.cfg.State.delivery(ctx, runID)
		if err != nil {
			f.g.log.Warn("how far a reply got could not be read; it is sent whole", "run_id", runID, "err", err)
		}
		if d.MessageID != "" {
			p.ref, p.sent = MessageRef{ChatID: f.c.chatID, ID: d.MessageID}, true
		}
		p.parts = d.Parts
		f.progress[runID] = p
	}
	return p
}

// flush edits the progress messages that changed, at most one edit per
// message per EditEvery; progress is best effort: a refused edit is not
// retried (the final reply is).
func (f *follower) flush(ctx context.Context, now time.Time) {
	if !f.r.limits.CanEdit {
		return
	}
	for runID, p := range f.progress {
		if !p.dirty || p.failed || (p.sent && now.Sub(p.lastEdit) < f.r.limits.EditEvery) {
			continue
		}
		text := p.render(f.r.limits.MaxText)
		if text == "" {
			continue
		}
		p.dirty, p.lastEdit = false, now
		m := Outgoing{ChatID: f.c.chatID, Text: text}
		var err error
		if !p.sent {
			p.ref, err = f.r.ch.Send(ctx, m)
			p.sent = err == nil
			if p.sent {
				// Before any edit can show the reply: a restart edits this
				// message into the reply rather than sending it again.
				if err := f.g.cfg.State.progressSent(context.WithoutCancel(ctx), runID, p.ref.ID); err != nil {
					f.g.log.Warn("a progress message could not be recorded; a restart sends the reply as a new message",
						"run_id", runID, "err", err)
				}
			}
		} else {
			err = f.r.ch.Edit(ctx, p.ref, m)
		}
		if err != nil {
			if _, again := RetryAfter(err); again {
				p.dirty = true // the next tick tries again
				continue
			}
			p.failed = true
			f.g.log.Warn("progress could not be shown", "chat", f.c.key, "err", err)
		}
	}
}

// addText adds a text delta. Text after a tool call is the model's next
// turn: it starts a paragraph of its own, not glued to the last sentence
// ("…a file.Done: …").
func (p *progress) addText(s string) {
	if p.turnEnded && p.text.Len() > 0 && s != "" {
		p.text.WriteString("\n\n")
	}
	if s != "" {
		p.turnEnded = false
	}
	p.text.WriteString(s)
	p.dirty = true
}

// addHint adds a tool call's hint, keeping the latest maxHints; the
// model's turn ends with its calls.
func (p *progress) addHint(h string) {
	p.hints = append(p.hints, h)
	if len(p.hints) > maxHints {
		p.hints = p.hints[len(p.hints)-maxHints:]
	}
	p.turnEnded, p.dirty = true, true
}

// render is the progress message: the latest tool hints and the tail of
// the text so far, within max runes.
func (p *progress) render(max int) string {
	var b strings.Builder
	for _, h := range p.hints {
		b.WriteString(h)
		b.WriteString("\n")
	}
	text := strings.TrimSpace(p.text.String())
	if text == "" {
		if b.Len() == 0 {
			return ""
		}
		b.WriteString("…")
		return clip(b.String(), max)
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	room := max - len([]rune(b.String())) - 1
	if r := []rune(text); len(r) > room && room > 0 {
		text = "…" + string(r[len(r)-room+1:])
	}
	b.WriteString(text)
	return clip(b.String(), max)
}

// toolHint is a line naming a tool call: "🔧 bash: go test ./...".
func toolHint(name string, input json.RawMessage) string {
	var in map[string]any
	_ = json.Unmarshal(input, &in)
	for _, k := range []string{"command", "path", "file_path", "url", "pattern", "query", "description", "name"} {
		if v, ok := in[k].(string); ok && v != "" {
			return "🔧 " + name + ": " + clip(strings.Join(strings.Fields(v), " "), 80)
		}
	}
	return "🔧 " + name
}

// finalText is what the chat is told at a run's end.
func finalText(d *agent.DoneEvent) string {
	text := strings.TrimSpace(d.Text)
	switch d.Reason {
	case agent.ReasonCompleted:
		if text == "" {
			return "(done, nothing to say)"
		}
		return text
	case agent.ReasonCancelled:
		return "⏹ Stopped."
	case agent.ReasonPlanReady: // nobody answered the plan in time (PERM-7)
		return "📋 The plan waits for approval: tell me to go ahead, or what to change.\n\n" + clip(d.Plan, maxPlanShown)
	}
	note := "⚠️ The run ended: " + string(d.Reason)
	if d.Error != "" {
		note += " — " + d.Error
	}
	if text != "" {
		return text + "\n\n" + note
	}
	return note
}

// finish sends the run's final reply — the progress message edited into
// its first part, the rest after it — and marks the run answered. A reply
// of more than three parts goes as its first part and a file where the
// platform takes files.
//
// A reply is sent once across restarts: the progress message and the
// parts the platform took are in the state (written as each goes out),
// so a restarted gateway edits the same message again — an edit repeated
// changes nothing — and sends only the parts not taken. What is left is
// the send of a new message (a part after the first, the file, or the
// first part where there is no progress message to edit) that the
// platform took but whose answer never reached the state — cut off by a
// stop or a crash (in the call, or in the one database write after it),
// or lost on the way: it is sent again, by the retry or at start, with
// the same [Outgoing.Key], which a platform taking idempotency keys
// (Feishu; a webhook receiver that keeps them) posts once.
func (f *follower) finish(ctx context.Context, runID, text string) {
	if !f.c.done(runID) {
		return
	}
	p := f.progressOf(ctx, runID)
	delete(f.progress, runID)
	f.g.dropApprovals(runID)
	parts := Split(text, f.r.limits.MaxText)
	var files []Attachment
	if len(parts) > 3 && f.r.limits.Files {
		files = []Attachment{{Name: "reply.md", MIME: "text/markdown", Data: []byte(text)}}
		parts = parts[:1]
	}
	// taken records that the platform took the first n parts, when a send
	// follows (after the last, marking the run answered records it).
	last := len(parts)
	if len(files) > 0 {
		last++
	}
	taken := func(n int) {
		if n == last {
			return
		}
		if err := f.g.cfg.State.partsSent(context.WithoutCancel(ctx), runID, n); err != nil {
			f.g.log.Warn("a sent part of a reply could not be recorded; a restart may send it again", "run_id", runID, "err", err)
		}
	}
	var err error
	for i, part := range parts {
		if i < p.parts {
			continue // taken before a restart
		}
		m := Outgoing{ChatID: f.c.chatID, Text: part, Key: fmt.Sprintf("%s/%d", runID, i)}
		if i == 0 && p.sent && !p.failed && f.r.limits.CanEdit {
			err = f.r.edit(ctx, p.ref, m)
			if _, again := RetryAfter(err); err != nil && !again && ctx.Err() == nil {
				// The progress message cannot be edited (deleted, or a
				// restart's, too old): the part goes as a new message.
				f.g.log.Warn("the progress message could not be edited into the reply; it is sent anew", "run_id", runID, "err", err)
				_, err = f.r.send(ctx, m)
			}
		} else {
			_, err = f.r.send(ctx, m)
		}
		if err != nil {
			break
		}
		taken(i + 1)
	}
	if err == nil && len(files) > 0 && p.parts <= len(parts) {
		// On its own: a retry of a refused upload does not post the text again.
		_, err = f.r.send(ctx, Outgoing{ChatID: f.c.chatID, Files: files, Key: runID + "/file"})
	}
	if err != nil {
		if ctx.Err() != nil {
			return // a restart sends it
		}
		f.g.log.Error("a reply could not be sent; it is given up", "chat", f.c.key, "run_id", runID, "err", err)
	}
	if err := f.g.cfg.State.answered(context.WithoutCancel(ctx), runID); err != nil {
		f.g.log.Error("a sent reply could not be marked; a restart may send it again", "run_id", runID, "err", err)
	}
}

// check answers the pending runs that ended without their done event
// reaching this follower, from the ledger.
func (f *follower) check(ctx context.Context) {
	for _, id := range f.c.pending() {
		run, err := f.g.cfg.Ledger.GetRun(ctx, id)
		if err != nil {
			if errors.Is(err, session.ErrNotFound) {
				f.finish(ctx, id, "⚠️ This message's run is gone (its session was deleted).")
			}
			continue
		}
		if !run.Status.Final() {
			continue
		}
		text, err := f.g.storedFinal(ctx, run)
		if err != nil {
			f.g.log.Warn("a run's end could not be read", "run_id", id, "err", err)
			continue
		}
		f.finish(ctx, id, text)
	}
}

// storedFinal is the final reply of an ended run, from its done event in
// the ledger, or from its state when it has none (cancelled while queued,
// interrupted by a crash).
func (g *Gateway) storedFinal(ctx context.Context, run *session.Run) (string, error) {
	evs, err := g.cfg.Ledger.Events(ctx, run.SessionID, 0, 0)
	if err != nil {
		return "", err
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].RunID != run.ID || evs[i].Type != string(agent.EventDone) {
			continue
		}
		var e agent.Event
		if err := json.Unmarshal(evs[i].Data, &e); err == nil && e.Done != nil {
			return finalText(e.Done), nil
		}
	}
	switch run.Status {
	case session.RunCancelled:
		return "⏹ Stopped.", nil
	case session.RunInterrupted:
		return "⚠️ The gateway stopped while this was running; send it again to retry.", nil
	}
	return fmt.Sprintf("⚠️ The run ended (%s) %s", run.Status, run.Error), nil
}
