package discord

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"sync"

	"github.com/bwmarrin/discordgo"

	"github.com/reinhq/rein/gateway"
)

// Catching up reads at most this many pages of 100 messages per chat.
const catchUpPages = 10

// seenChats is, per chat, the newest message id the handler stored.
type seenChats struct {
	mu   sync.Mutex
	last map[string]string
}

func newSeenChats() *seenChats { return &seenChats{last: map[string]string{}} }

// note records id as stored in chat if it is newer than the last.
func (s *seenChats) note(chat, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.last[chat]; !ok || snowflakeLess(old, id) {
		s.last[chat] = id
	}
}

// snapshot copies the map.
func (s *seenChats) snapshot() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.last))
	for k, v := range s.last {
		out[k] = v
	}
	return out
}

// snowflakeLess orders Discord ids (numbers that grow with time).
func snowflakeLess(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	if errA == nil && errB == nil {
		return x < y
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// catchUp hands h the users' messages posted, in the chats h has stored
// messages of, after the newest stored one: those the gateway did not
// dispatch while the bot was away. h dedups what it has already.
func (c *Channel) catchUp(ctx context.Context, h gateway.Handler, self string) {
	for chat, after := range c.seen.snapshot() {
		for range catchUpPages {
			msgs, err := c.rest.ChannelMessages(chat, 100, "", after, "", discordgo.WithContext(ctx))
			if err != nil {
				if ctx.Err() == nil {
					slog.Warn("discord: fetching missed messages failed", "channel", c.name, "chat", chat, "err", err)
				}
				break
			}
			slices.SortFunc(msgs, func(a, b *discordgo.Message) int {
				switch {
				case a == nil || b == nil:
					return 0
				case snowflakeLess(a.ID, b.ID):
					return -1
				case snowflakeLess(b.ID, a.ID):
					return 1
				}
				return 0
			})
			for _, m := range msgs {
				if m == nil || !snowflakeLess(after, m.ID) {
					continue
				}
				after = m.ID
				if m.ChannelID == "" {
					m.ChannelID = chat
				}
				if fromUser(m, self) {
					c.handleMessage(ctx, h, m)
				}
				if ctx.Err() != nil {
					return
				}
			}
			if len(msgs) < 100 {
				break
			}
		}
	}
}
