package llm

import (
	"context"
	"errors"
	"io"
	"strings"
	"syscall"
)

// netError has the method set of net.Error: an error that says whether it
// was a timeout. It is spelled out here so that llm, the leaf every core
// package imports, does not import package net (the HTTP plumbing of the
// adapters lives in llm/vendorhttp).
type netError interface {
	error
	Timeout() bool
	Temporary() bool
}

// FromTransport classifies an error that happened before or while reading a
// reply: a cancelled context, a timeout, a refused or reset connection, a body
// cut short.
func FromTransport(ctx context.Context, provider string, err error) *Error {
	if e, ok := AsError(err); ok {
		return e
	}
	e := &Error{Provider: provider, Err: err}
	var ne netError
	switch {
	case ctx.Err() != nil:
		e.Kind = KindCancelled
		e.Err = ctx.Err()
	case errors.Is(err, context.Canceled):
		e.Kind = KindCancelled
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		e.Kind = KindStreamCut
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE):
		e.Kind = KindNetwork
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		e.Kind = KindTimeout
	case errors.As(err, &ne):
		e.Kind = KindNetwork
	case strings.Contains(err.Error(), "connection reset"), strings.Contains(err.Error(), "broken pipe"),
		strings.Contains(err.Error(), "server closed"), strings.Contains(err.Error(), "EOF"):
		e.Kind = KindNetwork
	default:
		e.Kind = KindUnknown
	}
	return e
}

// StreamCut returns the error for a stream that ended before its final event.
func StreamCut(provider, what string) *Error {
	return &Error{Kind: KindStreamCut, Provider: provider, Message: "stream ended before " + what}
}

// Malformed returns the error for stream data that does not parse.
func Malformed(provider string, err error) *Error {
	return &Error{Kind: KindMalformed, Provider: provider, Message: "malformed stream data: " + err.Error(), Err: err}
}

// AuthMissing returns the error for a provider with no credentials; envVar
// names the variable that would supply them.
func AuthMissing(provider, envVar string) *Error {
	return &Error{Kind: KindAuth, Provider: provider, Message: "no API key configured",
		Hint: "set " + envVar + " or add a profile with `rein provider add`"}
}

// WithAuthHint sets the hint of an auth failure to name the variable holding
// the key, and returns e.
func (e *Error) WithAuthHint(envVar string) *Error {
	if e.Kind == KindAuth && e.Hint == "" {
		e.Hint = "the API key was rejected; check " + envVar + " (or the profile's key) and try again"
	}
	return e
}
