package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/reinhq/rein/api"
)

// errStreamEnded is why a stream that closed cleanly is reopened.
var errStreamEnded = errors.New("the server closed the stream")

// permanentError marks a failure that reconnecting cannot cure.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Events streams a session's events after afterID (0: from the start of
// what the server keeps): GET /sessions/{id}/events.
//
// The iterator yields each event once, in id order; comments and
// heartbeats are skipped. When the connection drops or the server closes
// the stream, it reconnects with Last-Event-ID set to the last id yielded,
// after a backoff between Options.ReconnectMin (or the server's retry:
// field) and ReconnectMax, longer when the server sent Retry-After. It
// gives up after Options.MaxReconnects attempts in a row that received
// nothing. It ends by yielding an error when ctx ends (ctx's error,
// wrapped), when the server refuses the stream for good (an *Error with a
// 4xx status other than 408 and 429: unknown session, bad credentials),
// when the response is not an event stream, when a line exceeds
// MaxEventSize, or when it gives up. Stop ranging to close the stream.
func (c *Client) Events(ctx context.Context, sessionID string, afterID int64) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		p, err := seg("session", sessionID)
		if err != nil {
			yield(Event{}, err)
			return
		}
		s := &eventStream{c: c, path: "/sessions/" + p + "/events", last: afterID}
		s.run(ctx, yield)
	}
}

// eventStream is the state of one Events iteration across connections.
type eventStream struct {
	c    *Client
	path string
	// last is the id of the last event yielded: where a reconnection
	// resumes.
	last int64
	// retry is the server's reconnection delay (retry: field), 0 if none.
	retry time.Duration
}

func (s *eventStream) run(ctx context.Context, yield func(Event, error) bool) {
	failures := 0
	for {
		alive, stopped, err := s.connect(ctx, yield)
		if stopped {
			return
		}
		if ctx.Err() != nil {
			yield(Event{}, fmt.Errorf("client: GET %s: %w", s.path, ctx.Err()))
			return
		}
		var perm permanentError
		if errors.As(err, &perm) {
			yield(Event{}, perm.err)
			return
		}
		if alive {
			failures = 0
		}
		failures++
		if limit := s.c.opts.MaxReconnects; limit >= 0 && failures > limit {
			yield(Event{}, fmt.Errorf("client: GET %s: giving up after %d failed attempts: %w", s.path, failures, err))
			return
		}
		if err := sleep(ctx, s.backoff(failures, err)); err != nil {
			yield(Event{}, fmt.Errorf("client: GET %s: %w", s.path, err))
			return
		}
	}
}

// connect opens the stream once and yields its events until it ends.
// alive says the connection delivered at least one line (an event or a
// heartbeat); stopped that the consumer stopped ranging.
func (s *eventStream) connect(ctx context.Context, yield func(Event, error) bool) (alive, stopped bool, err error) {
	req, err := s.c.newRequest(ctx, http.MethodGet, s.path, nil, nil)
	if err != nil {
		return false, false, permanentError{err}
	}
	req.Header.Set("Accept", "text/event-stream, application/problem+json")
	req.Header.Set("Cache-Control", "no-cache")
	if s.last > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(s.last, 10))
	}
	resp, err := s.c.send(req)
	if err != nil {
		var apiErr *Error
		if errors.As(err, &apiErr) && !apiErr.temporary() {
			return false, false, permanentError{err}
		}
		return false, false, err
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return false, false, permanentError{fmt.Errorf("client: GET %s: the response is %q, not text/event-stream", s.path, resp.Header.Get("Content-Type"))}
	}
	r := newSSEReader(resp.Body)
	defer func() {
		alive = r.lines > 0
		if r.retry > 0 {
			s.retry = r.retry
		}
	}()
	for {
		f, err := r.next()
		switch {
		case errors.Is(err, ErrEventTooLarge):
			return false, false, permanentError{fmt.Errorf("client: GET %s: %w", s.path, err)}
		case errors.Is(err, io.EOF):
			return false, false, errStreamEnded
		case err != nil:
			return false, false, fmt.Errorf("client: GET %s: %w", s.path, err)
		}
		if f.hasID && f.id <= s.last {
			continue // sent before the reconnection
		}
		if f.hasID {
			s.last = f.id
		}
		if !yield(Event{ID: f.id, Type: f.typ, Data: f.data}, nil) {
			return false, true, nil
		}
	}
}

// backoff is the wait before attempt failures+1: the base (the server's
// retry: or ReconnectMin) doubled per failure up to ReconnectMax, ±20%,
// and at least the server's Retry-After.
func (s *eventStream) backoff(failures int, err error) time.Duration {
	o := s.c.opts
	d := max(o.ReconnectMin, s.retry)
	for i := 1; i < failures && d < o.ReconnectMax; i++ {
		d *= 2
	}
	d = min(d, max(o.ReconnectMax, s.retry))
	d = time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
	var apiErr *Error
	if errors.As(err, &apiErr) {
		d = max(d, apiErr.RetryAfter)
	}
	return d
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Final reports whether a run's status is final: completed, failed,
// cancelled or interrupted.
func Final(status string) bool {
	switch status {
	case "completed", "failed", "cancelled", "interrupted":
		return true
	}
	return false
}

// Wait waits for a run to end and returns it in its final state. It looks
// at the run (GET /runs/{id}) at growing intervals, from a tenth of
// Options.PollInterval up to it; transient failures (network, 408, 429,
// 5xx) are retried up to Options.MaxReconnects times in a row, others
// returned at once. To follow a run as it happens, range over
// [Client.Events] instead: its done event ends the run.
func (c *Client) Wait(ctx context.Context, runID string) (*api.Run, error) {
	if _, err := seg("run", runID); err != nil {
		return nil, err
	}
	wait := max(c.opts.PollInterval/10, time.Millisecond)
	failures := 0
	for {
		r, err := c.Run(ctx, runID)
		var apiErr *Error
		switch {
		case err == nil:
			failures = 0
			if Final(r.Status) {
				return r, nil
			}
		case ctx.Err() != nil:
			return nil, err
		case errors.As(err, &apiErr) && !apiErr.temporary():
			return nil, err
		default:
			failures++
			if limit := c.opts.MaxReconnects; limit >= 0 && failures > limit {
				return nil, fmt.Errorf("client: waiting for run %s: giving up after %d failed attempts: %w", runID, failures, err)
			}
		}
		d := wait
		if apiErr != nil {
			d = max(d, apiErr.RetryAfter)
		}
		if err := sleep(ctx, d); err != nil {
			return nil, fmt.Errorf("client: waiting for run %s: %w", runID, err)
		}
		wait = min(wait*2, c.opts.PollInterval)
	}
}
