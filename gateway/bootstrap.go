package gateway

import (
	"context"

	"github.com/reinhq/rein/persona"
)

// bootstrap is the persona's first-run conversation (GW-1), held by the
// first chat of an allowed user that wrote while the persona had no name.
type bootstrap struct {
	key string
	b   *persona.Bootstrap
}

// bootstrapping runs the persona's bootstrap in the chat while the
// persona has no name: it asks the questions one at a time and writes
// SOUL.md, identity.yaml and the profile once answered. It reports
// whether it took the message.
func (g *Gateway) bootstrapping(ctx context.Context, r *route, m Inbound, text string) bool {
	if g.cfg.PersonaDir == "" || g.cfg.Memory == nil {
		return false
	}
	key := chatKey(r.name, m.ChatID)
	g.mu.Lock()
	wants := g.boot != nil && g.boot.key == key
	if g.boot == nil {
		p, err := persona.Load(g.cfg.PersonaDir)
		wants = err == nil && !p.Bootstrapped()
	}
	g.mu.Unlock()
	if !wants {
		return false
	}
	// A redelivered answer is not the answer to the next question.
	if fresh, err := g.cfg.State.take(ctx, r.name, m.ID, key, "", stateAnswered, g.cfg.Now()); err != nil || !fresh {
		return true
	}
	say, took := g.bootstrapStep(ctx, key, text)
	if say != "" {
		g.reply(r, m.ChatID, say)
	}
	return took
}

// bootstrapStep advances the bootstrap with the chat's message and
// returns what to say.
func (g *Gateway) bootstrapStep(ctx context.Context, key, text string) (say string, took bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.boot == nil {
		p, err := persona.Load(g.cfg.PersonaDir)
		if err != nil || p.Bootstrapped() {
			return "", false
		}
		g.boot = &bootstrap{key: key, b: persona.NewBootstrap()}
		q, _ := g.boot.b.Next()
		// The first question greets; this only says what follows.
		return q + "\n\n(The first of a few questions so I know who to be; skip any optional one with \"skip\".)", true
	}
	if g.boot.key != key {
		return "", false // another chat is setting it up; this one talks to the agent as it is
	}
	if err := g.boot.b.Answer(text); err != nil {
		return "⚠️ " + err.Error(), true
	}
	if q, done := g.boot.b.Next(); !done {
		return q, true
	}
	if err := g.boot.b.Apply(ctx, g.cfg.PersonaDir, g.cfg.Memory); err != nil {
		g.boot = nil
		return "⚠️ The persona could not be saved: " + err.Error() + "\nLet's try again.", true
	}
	name := g.boot.b.Result().Identity.Name
	g.boot = nil
	return "Thanks! I'm " + name + " from now on. What can I do for you?", true
}
