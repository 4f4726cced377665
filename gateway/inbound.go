package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
)

// refuseEvery is how often one stranger is told they are refused; their
// other messages are dropped unanswered.
const refuseEvery = 10 * time.Minute

// maxInboundText caps a message's text; longer ones are cut, saying so.
const maxInboundText = 32 << 10

// handler is the gateway's Handler for one route.
type handler struct {
	g *Gateway
	r *route
}

// allowed reports whether the route's allowlist names the user.
func (r *route) allowed(user string) bool { return r.anyone || (user != "" && r.allow[user]) }

// HandleMessage implements Handler.
func (h *handler) HandleMessage(ctx context.Context, m Inbound) error {
	g, r := h.g, h.r
	if m.ChatID == "" || m.ID == "" {
		return fmt.Errorf("gateway: channel %s: a message without a chat or update id", r.name)
	}
	if !r.allowed(m.UserID) {
		g.refuse(r, m)
		return nil
	}
	text := strings.TrimSpace(m.Text)
	if len(text) > maxInboundText {
		text = text[:maxInboundText] + "\n[message cut at 32 KiB]"
	}
	if taken, err := g.planCommand(ctx, r, m, text); taken {
		return err
	}
	if cmd, arg, ok := command(text); ok {
		if fresh, err := g.cfg.State.take(ctx, r.name, m.ID, chatKey(r.name, m.ChatID), text, stateAnswered, g.cfg.Now()); err != nil || !fresh {
			return err
		}
		g.runCommand(ctx, r, m, cmd, arg)
		return nil
	}
	if g.bootstrapping(ctx, r, m, text) {
		return nil
	}
	c, err := g.chatFor(ctx, r, m.ChatID)
	if err != nil {
		return err
	}
	var images []llm.Image
	if len(m.Attachments) > 0 {
		var note string
		note, images = g.attach(r, m)
		text = strings.TrimSpace(text + "\n\n" + note)
	}
	if text == "" {
		return nil // a sticker, a reaction: nothing to answer
	}
	// One message of a chat at a time: submission order is message order.
	c.mu.Lock()
	defer c.mu.Unlock()
	fresh, err := g.cfg.State.take(ctx, r.name, m.ID, c.key, text, stateReceived, g.cfg.Now())
	if err != nil || !fresh {
		return err // stored before: a redelivery, handled once
	}
	busy := len(c.runs) > 0
	if err := g.submitMode(ctx, c, m.ID, text, c.r.PermissionMode, images); err != nil {
		return err
	}
	if busy {
		g.reply(r, m.ChatID, "⏳ Queued: I'll answer this after the reply I'm working on. /stop cancels both.")
	}
	return nil
}

// submit turns a stored update into a run of the chat's session and
// follows it; c.mu is held.
func (g *Gateway) submit(ctx context.Context, c *chat, updateID, text string) error {
	return g.submitMode(ctx, c, updateID, text, c.r.PermissionMode, nil)
}

// submitMode is submit with the run's permission mode (a /plan's) and
// the images that go with the text (SPEC LOOP-2).
func (g *Gateway) submitMode(ctx context.Context, c *chat, updateID, text, mode string, images []llm.Image) error {
	after, err := g.cfg.Ledger.LastEventID(ctx, c.sessionID)
	if err != nil {
		return err
	}
	model := c.model
	if model == "" {
		model = c.r.Model
	}
	run, err := g.cfg.Service.Submit(ctx, session.Submission{SessionID: c.sessionID, Caller: c.key, Text: text,
		Model: model, PermissionMode: mode, Images: images})
	if errors.Is(err, session.ErrInvalid) {
		// A bad /model or mode: the user is told; the update is handled.
		g.reply(c.r, c.chatID, "⚠️ "+err.Error())
		return g.cfg.State.answeredUpdate(ctx, c.r.name, updateID)
	}
	if err != nil {
		return fmt.Errorf("gateway: %s: %w", c.key, err)
	}
	if err := g.cfg.State.submitted(ctx, c.r.name, updateID, run.ID); err != nil {
		return err
	}
	g.trackLocked(c, run.ID, after)
	return nil
}

// refuse tells a stranger, at most every refuseEvery, that the agent is
// not theirs, and their id for the owner to allow; nothing is stored.
func (g *Gateway) refuse(r *route, m Inbound) {
	key := r.name + ":" + m.UserID
	now := g.cfg.Now()
	g.mu.Lock()
	last, seen := g.refused[key]
	if !seen || now.Sub(last) > refuseEvery {
		g.refused[key] = now
	}
	g.mu.Unlock()
	g.log.Info("a stranger was refused", "channel", r.name, "chat", m.ChatID, "user", m.UserID)
	if seen && now.Sub(last) <= refuseEvery {
		return
	}
	g.reply(r, m.ChatID, fmt.Sprintf("Sorry, this agent answers only the people its owner allowed. Your %s user id is %s: "+
		"the owner can add it to allow: of the %s channel in gateway.yaml.", r.name, m.UserID, r.name))
}

// HandleAction implements Handler: a press of a permission question's
// button, by an allowed user of that chat.
func (h *handler) HandleAction(ctx context.Context, a Action) error {
	g, r := h.g, h.r
	token, verdict, ok := strings.Cut(strings.TrimPrefix(a.Data, actionPrefix), ":")
	if !strings.HasPrefix(a.Data, actionPrefix) || !ok {
		return nil // not ours
	}
	if !r.allowed(a.UserID) {
		g.log.Info("a stranger pressed a button", "channel", r.name, "chat", a.ChatID, "user", a.UserID)
		g.reply(r, a.ChatID, fmt.Sprintf("Sorry, only the people this agent's owner allowed can answer (your id: %s).", a.UserID))
		return nil
	}
	if _, err := g.answer(ctx, r, a.ChatID, userName(a.UserName, a.UserID), token, verdict); err != nil {
		g.reply(r, a.ChatID, "⚠️ "+err.Error())
	}
	return nil
}

// userName is how a user is named in messages.
func userName(name, id string) string {
	if name != "" {
		return name
	}
	return id
}
