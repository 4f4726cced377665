package redisbus

import (
	"context"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The live feed: one pub/sub connection per Bus, subscribed to the channel
// of every session the process follows, read by one goroutine (read) that
// hands each message to its session's record without ever waiting for a
// subscriber.

// read is the feed's goroutine. A message goes to its session's record; a
// subscription confirmation readies a new record, or, for a record already
// confirmed, says the connection was replaced and the record must catch
// up. After Timeout of silence it pings; after twice it, it replaces the
// connection.
func (b *Bus) read() {
	defer b.wg.Done()
	var silent int
	var backoff time.Duration
	for {
		ps := b.pubsub()
		msg, err := ps.ReceiveTimeout(context.Background(), b.timeout)
		if b.isClosed() {
			return
		}
		if err != nil {
			if isTimeout(err) {
				if silent++; silent == 1 {
					b.ping(ps)
				} else {
					b.log.Warn("redisbus: the live feed is silent: reconnecting", "after", 2*b.timeout)
					b.replace()
					silent = 0
				}
				continue
			}
			silent = 0
			if backoff == 0 {
				b.rec.Add(1)
				b.log.Warn("redisbus: the live feed lost its connection: reconnecting", "err", err)
			}
			b.feedLost()
			if !b.pause(&backoff) {
				return
			}
			continue
		}
		silent, backoff = 0, 0
		switch m := msg.(type) {
		case *redis.Message:
			b.onMessage(m.Channel, m.Payload)
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				b.onSubscribed(m.Channel)
			}
		}
	}
}

func (b *Bus) pubsub() *redis.PubSub {
	b.cmdMu.Lock()
	defer b.cmdMu.Unlock()
	return b.ps
}

func (b *Bus) ping(ps *redis.PubSub) {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	_ = ps.Ping(ctx) // a failure shows on the next read
}

// replace closes the feed's connection and subscribes a new one to every
// session's channel: the confirmations make the records catch up.
func (b *Bus) replace() {
	b.cmdMu.Lock()
	defer b.cmdMu.Unlock()
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	channels := make([]string, 0, len(b.sessions))
	b.outstanding = make(map[string]int, len(b.sessions))
	for _, r := range b.sessions {
		channels = append(channels, r.channel)
		b.outstanding[r.channel] = 1
	}
	b.mu.Unlock()
	_ = b.ps.Close()
	b.ps = b.rdb.Subscribe(context.Background())
	b.rec.Add(1)
	b.feedLost()
	if len(channels) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	if err := b.ps.Subscribe(ctx, channels...); err != nil {
		b.log.Warn("redisbus: resubscribing the live feed failed", "err", err)
	}
}

// onMessage hands an event message to its session's record.
func (b *Bus) onMessage(channel, payload string) {
	sid, ok := strings.CutPrefix(channel, b.prefix+"c:")
	if !ok {
		return
	}
	b.mu.RLock()
	r := b.sessions[sid]
	b.mu.RUnlock()
	if r == nil {
		return
	}
	b.received.Add(1)
	prev, ev, err := decode(sid, payload)
	if err != nil {
		b.log.Warn("redisbus: corrupt message", "session_id", sid, "err", err)
		r.mu.Lock()
		r.schedule() // the catch-up reads the entry, and breaks the chain on it
		r.mu.Unlock()
		return
	}
	r.onMessage(prev, ev)
}

// onSubscribed takes the confirmation of a SUBSCRIBE.
func (b *Bus) onSubscribed(channel string) {
	sid, ok := strings.CutPrefix(channel, b.prefix+"c:")
	if !ok {
		return
	}
	b.mu.Lock()
	n := b.outstanding[channel]
	switch {
	case n > 1:
		b.outstanding[channel] = n - 1
	case n == 1:
		delete(b.outstanding, channel)
	}
	r := b.sessions[sid]
	b.mu.Unlock()
	if r == nil || n > 1 {
		return // a later SUBSCRIBE is the one that counts
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.confirmed {
		r.confirmed = true
		close(r.ready)
		return
	}
	// Subscribed again: the connection was replaced, and messages may
	// have been missed meanwhile.
	r.schedule()
	b.feedLost()
}

// pause waits for the next attempt after a failure, backing off from 50ms
// to 1s; it reports false when the bus closed meanwhile.
func (b *Bus) pause(backoff *time.Duration) bool {
	*backoff = min(max(2**backoff, 50*time.Millisecond), time.Second)
	t := time.NewTimer(*backoff)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-b.done:
		return false
	}
}

func isTimeout(err error) bool {
	var nerr net.Error
	return errors.As(err, &nerr) && nerr.Timeout()
}
