package session

import (
	"context"
	"errors"
)

// ErrFenced is the error of a write refused for its fencing token: the
// token is below the highest the store has seen for the session, so the
// writer's lease on the session was lost and another holder has it. The
// writer must stop writing to the session; the new holder heals it.
var ErrFenced = errors.New("refused by the session's fence: the writer's lease on the session was lost " +
	"and another holder has the session (its fencing token is higher)")

// fenceKey is the context key of session id's fencing token.
type fenceKey struct{ sessionID string }

// WithFence returns a copy of ctx carrying token as the fencing token of
// the writes of session sessionID (see Fencing in the package
// documentation): a worker passes its lease's token. It applies to that
// session only: ctx may carry tokens for several sessions, and a later
// WithFence of the same session replaces the token.
func WithFence(ctx context.Context, sessionID string, token int64) context.Context {
	return context.WithValue(ctx, fenceKey{sessionID}, token)
}

// FenceOf returns the fencing token ctx carries for the writes of session
// sessionID, and whether it carries one.
func FenceOf(ctx context.Context, sessionID string) (token int64, ok bool) {
	token, ok = ctx.Value(fenceKey{sessionID}).(int64)
	return token, ok
}
