package redisbus

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// The broadcast channel carries small messages to every process sharing
// the bus's Redis and prefix: the runner's cancellations and permission
// answers, which reach whichever process runs the run (SPEC API-5). It is
// Redis pub/sub: a message reaches the processes listening when it is
// sent, never one that starts or reconnects later.

// broadcastChannel is the pub/sub channel of Broadcast and Listen.
func (b *Bus) broadcastChannel() string { return b.prefix + "broadcast" }

// MaxBroadcast is the largest message Broadcast sends, in bytes.
const MaxBroadcast = 64 << 10

// Broadcast sends msg to every process listening on the bus's Redis
// (Listen), this one included, and returns how many received it. An
// unreachable Redis is an error wrapping [eventbus.ErrUnavailable].
func (b *Bus) Broadcast(ctx context.Context, msg []byte) (int, error) {
	if len(msg) > MaxBroadcast {
		return 0, fmt.Errorf("redisbus: broadcast of %d bytes, the limit is %d", len(msg), MaxBroadcast)
	}
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	n, err := b.rdb.Publish(ctx, b.broadcastChannel(), msg).Result()
	if err != nil {
		return 0, b.unreachable(err)
	}
	return int(n), nil
}

// Listen calls deliver with every message broadcast on the bus's Redis
// until ctx ends or the bus closes; deliver runs on Listen's goroutine,
// one message at a time. It calls ready once Redis confirmed the
// subscription: a message published after that reaches deliver. Listen
// holds a connection of its own and re-subscribes after Redis comes back;
// messages sent while it was away are not delivered. An unreachable Redis
// is an error wrapping [eventbus.ErrUnavailable], ready not called.
func (b *Bus) Listen(ctx context.Context, ready func(), deliver func(msg []byte)) error {
	ps := b.rdb.Subscribe(ctx, b.broadcastChannel())
	defer ps.Close()
	// Subscribe does not wait for Redis; Receive does, for the
	// confirmation (the first reply on a new subscription).
	rctx, cancel := context.WithTimeout(ctx, b.timeout)
	_, err := ps.Receive(rctx)
	cancel()
	if err != nil {
		return b.unreachable(err)
	}
	ready()
	ch := ps.Channel(redis.WithChannelHealthCheckInterval(listenHealthCheck), redis.WithChannelSize(256))
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-b.done:
			return nil
		case m, ok := <-ch:
			if !ok {
				return nil
			}
			deliver([]byte(m.Payload))
		}
	}
}

// listenHealthCheck is how often Listen's connection is checked.
const listenHealthCheck = 5 * time.Second
