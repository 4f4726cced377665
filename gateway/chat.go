package gateway

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/reinhq/rein/session"
)

// chat is one conversation in the pool: its session and the runs of its
// messages not yet answered. Idle, it is a few hundred bytes; the
// follower goroutine exists only while runs are pending.
type chat struct {
	key, chatID string
	r           *route

	mu        sync.Mutex
	sessionID string
	model     string
	runs      []string // runs not yet answered, in submission order
	following bool
	last      time.Time
}

// idle reports whether the chat may leave the pool.
func (c *chat) idle(now time.Time, after time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.runs) == 0 && !c.following && now.Sub(c.last) > after
}

// pending returns the runs not yet answered.
func (c *chat) pending() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.runs)
}

// has reports whether the run is one of the pending ones.
func (c *chat) has(runID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.runs, runID)
}

// busy reports whether runs are pending.
func (c *chat) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.runs) > 0
}

// done removes an answered run; it reports whether it was pending.
func (c *chat) done(runID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.runs, runID)
	if i < 0 {
		return false
	}
	c.runs = slices.Delete(c.runs, i, i+1)
	return true
}

// chatKey is the routing key of a chat.
func chatKey(channel, chatID string) string { return channel + ":" + chatID }

// chatFor returns the chat from the pool, loading it from the state or
// opening its session when it is new.
func (g *Gateway) chatFor(ctx context.Context, r *route, chatID string) (*chat, error) {
	key := chatKey(r.name, chatID)
	g.mu.Lock()
	c := g.chats[key]
	g.mu.Unlock()
	if c != nil {
		c.mu.Lock()
		c.last = g.cfg.Now()
		c.mu.Unlock()
		return c, nil
	}
	row, ok, err := g.cfg.State.chat(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("gateway: chat %s: %w", key, err)
	}
	if !ok {
		if row.SessionID, err = g.newSession(ctx, r, chatID); err != nil {
			return nil, err
		}
		if err := g.cfg.State.setChat(ctx, key, row, g.cfg.Now()); err != nil {
			return nil, fmt.Errorf("gateway: chat %s: %w", key, err)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if c := g.chats[key]; c != nil { // loaded meanwhile by another update
		return c, nil
	}
	c = &chat{key: key, chatID: chatID, r: r, sessionID: row.SessionID, model: row.Model, last: g.cfg.Now()}
	g.chats[key] = c
	return c, nil
}

// newSession opens a session for a chat in its route's workspace.
func (g *Gateway) newSession(ctx context.Context, r *route, chatID string) (string, error) {
	now := g.cfg.Now()
	s := &session.Session{Caller: chatKey(r.name, chatID), Workspace: r.ws.ID, WorkDir: r.ws.Dir,
		Title: r.name + " chat " + chatID, CreatedAt: now, UpdatedAt: now}
	if err := g.cfg.Sessions.Create(ctx, s); err != nil {
		return "", fmt.Errorf("gateway: open a session for %s: %w", chatKey(r.name, chatID), err)
	}
	return s.ID, nil
}

// trackLocked adds a run to the chat's pending ones and makes sure a
// follower renders them; c.mu is held. after is where the follower starts
// in the session's stream (events before the run).
func (g *Gateway) trackLocked(c *chat, runID string, after int64) {
	c.runs = append(c.runs, runID)
	if c.following {
		return
	}
	sid := c.sessionID
	c.following = g.spawn(func(ctx context.Context) { g.follow(ctx, c, sid, after) })
}
