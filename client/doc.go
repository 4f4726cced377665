// Package client is the Go client of rein's HTTP API (docs: the API table
// of package server; wire types in package api). A [Client] holds a base
// URL and how to authenticate; each method is one request and returns the
// api type of the response.
//
// Failures the server reports come back as *[Error], decoded from the
// RFC 9457 problem+json body — status, title, detail (what is wrong and
// how to fix it), the fields at fault and Retry-After — and match the
// sentinels [ErrNotFound], [ErrConflict], [ErrUnauthorized] and
// [ErrRateLimited] with errors.Is. Transport failures are wrapped with the
// request they belong to.
//
// [Client.Events] reads a session's server-sent event stream as an
// iterator. When the connection drops — a network failure, a server
// restart, a server that cut off a slow reader — it reconnects with
// Last-Event-ID after a bounded, jittered backoff, so the consumer sees
// every event once and in order; heartbeats and comments never reach it.
// [Client.Wait] waits for a run to end.
package client
