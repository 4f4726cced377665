package queue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Queue says which sessions have work and hands each to one holder at a
// time. See the package documentation for the model and the worker's loop.
// Every method is safe for concurrent use.
type Queue interface {
	// Enqueue says the session has work (queued runs in the ledger). It is
	// cheap and idempotent while a message for the session is waiting:
	// those coalesce into one. An Enqueue made while the session is leased
	// is never lost: the session is handed out again after the lease ends.
	// An empty or oversized id is [ErrInvalid]; a queue that cannot reach
	// its server answers [ErrUnavailable].
	Enqueue(ctx context.Context, sessionID string) error
	// Take blocks until it holds the lease of a session with work, oldest
	// message first, or ctx ends (ctx's error), or the queue is closed
	// ([ErrClosed]). At most one lease of a session is held at any time,
	// across processes. A queue that cannot reach its server answers
	// [ErrUnavailable] rather than waiting for it: callers pause and retry.
	Take(ctx context.Context) (*Lease, error)
	// Stats returns the queue's figures (for metrics and queue latency).
	Stats(ctx context.Context) (Stats, error)
	// Close ends the queue: blocked Takes return [ErrClosed], leases still
	// held stop renewing and are lost. Messages stay with the server (the
	// Redis queue) or are dropped (the in-process one; Resync at the next
	// start finds their runs in the ledger). Close is idempotent.
	Close() error
}

// Stats are a queue's figures at one moment.
type Stats struct {
	// Waiting is the number of messages not taken yet (coalesced: at most
	// one per session, plus re-deliveries racing a lease).
	Waiting int
	// Leased is the number of sessions taken and not yet released,
	// including those of dead holders not reclaimed yet.
	Leased int
	// OldestWait is how long the oldest waiting message has waited; 0
	// when none waits.
	OldestWait time.Duration
}

// Errors that callers test with errors.Is.
var (
	// ErrClosed is returned by every method of a closed queue.
	ErrClosed = errors.New("run queue closed")
	// ErrUnavailable wraps a failure to reach the queue's server (Redis
	// down, unreachable, or not answering in time): try again later (the
	// server answers 503).
	ErrUnavailable = errors.New("run queue unreachable")
	// ErrLeaseLost says a lease ended without its holder releasing it: it
	// ran out before it was renewed, the queue was closed, or another
	// holder may have taken the session since. The holder must stop
	// writing to the session at once.
	ErrLeaseLost = errors.New("session lease lost")
	// ErrInvalid wraps bad input: an empty or oversized session id, a bad
	// option.
	ErrInvalid = errors.New("invalid run queue input")
)

// MaxSessionID is the longest session id a queue accepts, in bytes.
const MaxSessionID = 512

// CheckSessionID returns an error wrapping [ErrInvalid] unless id is a
// session id a queue accepts: 1 to [MaxSessionID] bytes of UTF-8 without
// spaces or control characters.
func CheckSessionID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty session id", ErrInvalid)
	case len(id) > MaxSessionID:
		return fmt.Errorf("%w: session id of %d bytes, the limit is %d", ErrInvalid, len(id), MaxSessionID)
	case !utf8.ValidString(id):
		return fmt.Errorf("%w: session id %q is not UTF-8", ErrInvalid, id)
	case strings.IndexFunc(id, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return fmt.Errorf("%w: session id %q holds a space or a control character", ErrInvalid, id)
	}
	return nil
}

// Options configure a queue. The zero value means the defaults. Every
// process sharing a queue should use the same TTL.
type Options struct {
	// TTL is how long a lease lasts without renewal (default
	// [DefaultTTL]): a holder that dies is replaced after it.
	TTL time.Duration
	// RenewEvery is how often a lease renews itself (default TTL/3, at
	// most TTL/2). A negative value turns the automatic renewal off: the
	// holder calls [Lease.Renew] itself (tests use it to play a stalled
	// holder). Either way the lease is lost once TTL passes without a
	// renewal.
	RenewEvery time.Duration
	// Consumer names this process to the queue's server (default
	// host-pid-random): 1 to 200 printable characters, no spaces.
	Consumer string
	// Resync returns the sessions that have queued runs in the ledger. It
	// is called when the queue starts and whenever the queue finds its
	// server lost its data (Redis restarted without persistence); each
	// session it returns is enqueued, so no queued run is stranded. Nil
	// skips it. A failing Resync is retried with a growing pause.
	Resync func(ctx context.Context) ([]string, error)
	// Logger receives the queue's warnings (default: discard).
	Logger *slog.Logger
	// Now is the clock (default time.Now). Tokens and lease deadlines
	// read it; timers still run on real time.
	Now func() time.Time
}

// Defaults of [Options].
const (
	DefaultTTL = 30 * time.Second
	// MaxConsumer is the longest Consumer name, in bytes.
	MaxConsumer = 200
)

// WithDefaults returns o with its zero fields set to the defaults, or an
// error wrapping [ErrInvalid] for a bad Consumer. Backends call it.
func (o Options) WithDefaults() (Options, error) {
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.RenewEvery == 0 {
		o.RenewEvery = o.TTL / 3
	}
	if o.RenewEvery > o.TTL/2 {
		o.RenewEvery = o.TTL / 2
	}
	if o.Consumer == "" {
		o.Consumer = defaultConsumer()
	}
	if err := checkConsumer(o.Consumer); err != nil {
		return o, err
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// checkConsumer validates a consumer name.
func checkConsumer(c string) error {
	if len(c) > MaxConsumer || !utf8.ValidString(c) ||
		strings.IndexFunc(c, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }) >= 0 {
		return fmt.Errorf("%w: consumer name %q: want 1 to %d printable characters without spaces",
			ErrInvalid, c, MaxConsumer)
	}
	return nil
}

// defaultConsumer returns host-pid-random.
func defaultConsumer() string {
	host, err := os.Hostname()
	if err != nil || checkConsumer(host) != nil || host == "" {
		host = "host"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%.120s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// TokenFloor is the lowest fencing token a lease granted at now may carry:
// now in milliseconds since the epoch times 1000. Backends grant
// max(last token of the session + 1, TokenFloor(now)), so tokens keep
// increasing across restarts of the queue and of its server as long as
// its clock does not go back; up to 1000 leases of one session per
// millisecond stay ahead of the clock. The figure stays below 2^53 (exact
// in a Lua number) until the year 2255.
func TokenFloor(now time.Time) int64 { return now.UnixMilli() * 1000 }
