package gateway

import (
	"context"
	"time"
)

// maxBackoff caps the wait between two tries of a send the platform
// refused for now without saying how long to wait.
const maxBackoff = time.Minute

// deliverTries bounds the tries of one send: with the backoff capped at a
// minute, a reply outlives an outage of about an hour. A restart starts
// over: the reply is not marked sent.
const deliverTries = 64

// retry calls send until it succeeds, fails for good (an error that is
// not a [*RetryError]), ctx ends or deliverTries run out. A RetryError's
// After is waited exactly (the platform's Retry-After); without one the
// wait doubles from half a second up to maxBackoff.
func retry[T any](ctx context.Context, send func() (T, error)) (T, error) {
	backoff := 500 * time.Millisecond
	for try := 1; ; try++ {
		v, err := send()
		after, again := RetryAfter(err)
		if err == nil || !again || try == deliverTries {
			return v, err
		}
		wait := after
		if wait <= 0 {
			wait = backoff
			backoff = min(2*backoff, maxBackoff)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, ctx.Err()
		case <-t.C:
		}
	}
}

// send posts m through the route's channel, retrying.
func (r *route) send(ctx context.Context, m Outgoing) (MessageRef, error) {
	m.Text = clip(m.Text, r.limits.MaxText)
	if !r.limits.Buttons {
		m.Buttons = nil
	}
	if !r.limits.Files {
		m.Files = nil
	}
	return retry(ctx, func() (MessageRef, error) { return r.ch.Send(ctx, m) })
}

// edit replaces a message's text, retrying.
func (r *route) edit(ctx context.Context, ref MessageRef, m Outgoing) error {
	m.Text = clip(m.Text, r.limits.MaxText)
	if !r.limits.Buttons {
		m.Buttons = nil
	}
	_, err := retry(ctx, func() (struct{}, error) { return struct{}{}, r.ch.Edit(ctx, ref, m) })
	return err
}
