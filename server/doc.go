// Package server is rein's HTTP API (SPEC API-1 … API-4, API-7): huma
// operations on the standard net/http mux, an OpenAPI 3.1 document at
// /openapi.json that is generated from the same code, problem+json errors
// (RFC 9457), and the session event stream as Server-Sent Events.
//
// The server never runs an agent. A message becomes a queued run through
// [Runtime] (the runner), which persists it before the 202 answer and
// schedules it; the server reads what the runner writes: sessions from a
// session.Store, workspaces, runs, durable events and audit records from a
// session.Ledger, live events from an eventbus.Bus. An SSE client reads the
// bus and, after a reconnect, the ledger; it never holds the run, so a
// client that disconnects or falls behind never stops or slows one.
//
// Every request except /health and /openapi.json (and /metrics when it is
// public) needs a caller (SPEC API-4): the subject of a signed JWT, a header
// set by a trusted proxy, or, when no authentication is configured, the
// local caller for loopback clients. With the web console (console.go,
// SPEC API-10), a browser's sign-in cookie names its caller too — only
// while valid, and a write made with it needs its CSRF token. Every workspace, session, run and
// audit record is scoped to its caller: another caller's id answers 404
// exactly like an unknown one. Requests are rate limited per caller, bodies
// are size limited and validated against the schema (unknown fields and
// query parameters are rejected; field names are case-sensitive, which the
// package sets for huma process-wide through huma.ValidateStrictCasing), and
// a rejected request writes nothing.
//
// Before any of that, every request is screened against web pages (SPEC
// API-8, screen in browser.go): its Host must be one the server answers to
// (hosts.go: no DNS rebinding), a request that changes state or opens an
// event stream must come from no page, the server's own or an allowed
// origin (cors.go, which also answers CORS for allowed origins), and a body
// must be declared JSON. Open event streams are capped per caller and in
// all, and a stream ends when the token that opened it expires (SPEC
// API-9, streams.go and events.go).
//
// A workspace's catalog, memory and knowledge base (SPEC API-10:
// catalog.go, memory.go, kb.go) are read through [WorkspaceData], which the
// runner implements; an ask_user question of a run is answered through
// [QuestionAnswerer] (questions.go). document.go completes the OpenAPI
// document once every operation is registered: the statuses the layers
// around the handlers answer, and the empty security requirement of a
// server without authentication. A message's W3C traceparent header
// (traceparent.go) is checked and handed to the run, whose trace joins it.
package server
