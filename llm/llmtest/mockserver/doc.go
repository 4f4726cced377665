// Package mockserver is an HTTP server that speaks the wire formats of the
// model vendors rein supports — Anthropic Messages, OpenAI Chat Completions,
// OpenAI Responses and Gemini generateContent/streamGenerateContent — and plays
// a script of [Turn] values instead of thinking (SPEC PROV-9).
//
// One server answers every vendor at its usual path, so a test points an
// adapter's base URL at [Server.URL] and enqueues the replies it wants. Every
// request is logged ([Server.Requests]) with its raw body and its content
// decoded back into rein's own message model, so tests can assert what an
// adapter sent without knowing the vendor's format. A turn may carry a
// [Fault]: an error status with or without retry-after, 529 overloaded, a
// connection reset before the first byte or mid-stream, a stream cut before
// its final event, malformed SSE, a slow stream, a byte-order mark before the
// body, keep-alive events with empty data, or the vendor's own
// context-length-exceeded error.
//
// The program in ./cmd/mockvendor serves a script file the same way, for
// benchmarks of the built binary.
package mockserver
