package eventbus

import (
	"context"
	"errors"
	"math"
)

// Event is one event of a session's stream.
//
// A bus shares one Event between all its subscribers and its window:
// neither the publisher (after Publish) nor a subscriber may modify it or
// the bytes of its Data.
type Event struct {
	// SessionID names the stream the event belongs to; it is never empty.
	SessionID string
	// ID is the event's position in the session's stream, assigned by the
	// publisher. It increases with every event of a session; it need not
	// be contiguous.
	ID int64
	// RunID is the run that produced the event.
	RunID string
	// Type is the agent event type: "text_delta", "message", "done", …
	Type string
	// Durable says the runner persisted the event before publishing it, so
	// the session ledger can replay it forever; deltas are not durable.
	Durable bool
	// Data is the event's JSON, sent to clients verbatim.
	Data []byte
}

// Bus fans the events of sessions out to their subscribers. All methods
// are safe for concurrent use; each session has one publisher at a time.
type Bus interface {
	// Publish delivers e to the session's current subscribers and keeps it
	// in the session's retained window, evicting the oldest event when the
	// window is full.
	//
	// It never blocks on a subscriber: one whose buffer is full is cut off
	// (its channel closed, Err() == ErrSlow), and Publish still succeeds.
	// An event whose ID is not above the session's last published ID is
	// rejected with an error wrapping [ErrOutOfOrder]; an empty SessionID
	// with one wrapping [ErrInvalid]. A rejected event reaches no one. If
	// ctx is done before the call, nothing is published and the error
	// wraps ctx.Err(). After Close the error wraps [ErrClosed].
	Publish(ctx context.Context, e Event) error

	// Subscribe returns a subscription to the session's events with
	// ID > afterID: first those still in the retained window, in order,
	// then live ones, with no gap and no duplicate between the two. The
	// subscription ends when ctx is done, when it is closed, when the bus
	// closes, or when it falls behind by more than its buffer; it holds at
	// least the whole replay plus the bus's buffer size of live events.
	//
	// Subscribing to a session the bus knows nothing of is allowed (the
	// subscriber waits for its first event). An empty sessionID or a
	// negative afterID is an error wrapping [ErrInvalid]; a done ctx
	// returns its error; after Close the error wraps [ErrClosed].
	Subscribe(ctx context.Context, sessionID string, afterID int64) (Subscription, error)

	// Close ends every subscription (Err() == ErrClosed) and makes later
	// Publish and Subscribe calls fail with [ErrClosed]. It is idempotent.
	Close() error
}

// Subscription is one subscriber's view of a session's stream. Its methods
// are safe for concurrent use.
type Subscription interface {
	// Events returns the subscription's channel, which yields the events in
	// ID order and is closed when the subscription ends (Close, ctx done,
	// bus closed, cut off). The events buffered when it ends are still
	// received before the close, so what a subscriber got is always a
	// contiguous part of the stream. The events are shared: do not modify
	// them.
	Events() <-chan *Event

	// Err says why the subscription ended, once Events() is closed: nil
	// after Close, [ErrSlow] when it was cut off, [ErrClosed] when the bus
	// closed, or the context's error. Before the end it returns nil.
	Err() error

	// Gap bounds what the subscription cannot replay: events with IDs in
	// (afterID, Gap] may have been published before Subscribe and are not
	// delivered, because the window had evicted them, or because the bus
	// has no record from before its first held event (it restarted, or
	// dropped an idle session). Gap is 0 when the bus holds every event
	// after afterID; otherwise it is above afterID, and every ID Events()
	// yields is above it — except when Gap is [GapUnknown].
	//
	// A caller needing every durable event reads the ledger for IDs in
	// (afterID, Gap] first, then forwards Events(), skipping IDs it already
	// sent (see the package documentation).
	Gap() int64

	// Close ends the subscription; Err() stays as it was if the
	// subscription had already ended, nil otherwise. It is idempotent.
	Close()
}

// Notifier is a [Subscription] that can tell its subscriber when it has
// something to receive, and hand over what waits without a channel, so
// that the subscriber need not keep a goroutine blocked on Events() while
// nothing happens: a server with 10,000 idle streams then holds 10,000
// subscriptions and no goroutine, timer or channel for them (issue 30).
// The in-memory bus's subscriptions are Notifiers.
//
// A subscriber uses Notify and Take, or Events(), not both: the events
// Take returned are not delivered again on Events().
type Notifier interface {
	Subscription
	// Notify arranges for f to be called once, the next time the
	// subscription has an event waiting or has ended — at once, on the
	// caller's goroutine, if it has or it is already. A later Notify
	// replaces an armed f. f runs while the bus holds the session's lock,
	// on the publisher's goroutine: it must return quickly and must not
	// call the bus (start a goroutine, or signal one, to Take the events).
	Notify(f func())
	// Take appends the events waiting, in ID order, to dst and returns
	// it; ended reports that the subscription is over (Err says why) and
	// the events returned are its last. It never blocks.
	Take(dst []*Event) (evs []*Event, ended bool)
}

// GapUnknown is the Gap of a subscription to a session of which the bus
// holds no event at all: anything after afterID may be missing, and events
// read from the ledger may come again on Events().
const GapUnknown int64 = math.MaxInt64

// Errors callers test with errors.Is.
var (
	// ErrSlow ends a subscription whose buffer filled up: the subscriber
	// fell behind the publisher. It resubscribes after the last event it
	// received.
	ErrSlow = errors.New("subscriber fell behind: its buffer is full")
	// ErrClosed is returned by a closed bus and ends its subscriptions.
	ErrClosed = errors.New("event bus closed")
	// ErrOutOfOrder rejects an event whose ID is not above the session's
	// last published one.
	ErrOutOfOrder = errors.New("event id not above the session's last published id")
	// ErrInvalid rejects an empty session id or a negative afterID.
	ErrInvalid = errors.New("invalid event bus input")
	// ErrUnavailable: the bus's server cannot be reached (Redis is down
	// or the network to it is); the same call may succeed later.
	ErrUnavailable = errors.New("event bus unreachable")
)
