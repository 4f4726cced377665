package gateway

import (
	"context"
	"fmt"
	"time"

	"github.com/reinhq/rein/session"
)

// keepAnswered is how long answered updates are remembered, against
// redeliveries.
const keepAnswered = 7 * 24 * time.Hour

// resume picks up the updates a stopped gateway left unanswered: an
// update stored but never submitted becomes its run now (or the run it
// did become, when the stop fell between the two); a submitted one's
// reply is sent when its run ends — at once for runs that ended while
// the gateway was down.
func (g *Gateway) resume(ctx context.Context) error {
	if err := g.cfg.State.prune(ctx, g.cfg.Now().Add(-keepAnswered)); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	open, err := g.cfg.State.open(ctx)
	if err != nil {
		return fmt.Errorf("gateway: read the unanswered updates: %w", err)
	}
	for _, p := range open {
		r := g.routes[p.Channel]
		if r == nil {
			g.log.Warn("an unanswered update of a channel no longer configured is left", "channel", p.Channel, "update", p.UpdateID)
			continue
		}
		chatID := p.ChatKey[len(r.name)+1:]
		c, err := g.chatFor(ctx, r, chatID)
		if err != nil {
			return err
		}
		if err := g.resumeOne(ctx, c, p); err != nil {
			return fmt.Errorf("gateway: resume %s: %w", c.key, err)
		}
	}
	return nil
}

func (g *Gateway) resumeOne(ctx context.Context, c *chat, p pending) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	after, err := g.cfg.Ledger.LastEventID(ctx, c.sessionID)
	if err != nil {
		return err
	}
	if p.State == stateSubmitted {
		g.trackLocked(c, p.RunID, after)
		return nil
	}
	// Received, not submitted: did the run get stored before the stop?
	runs, err := g.cfg.Ledger.ListRuns(ctx, session.RunFilter{SessionID: c.sessionID, Caller: c.key})
	if err != nil {
		return err
	}
	for _, run := range runs {
		if run.Prompt == p.Text && !run.CreatedAt.Before(p.Received) {
			if err := g.cfg.State.submitted(ctx, p.Channel, p.UpdateID, run.ID); err != nil {
				return err
			}
			g.trackLocked(c, run.ID, after)
			return nil
		}
	}
	return g.submit(ctx, c, p.UpdateID, p.Text)
}
