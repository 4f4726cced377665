// Package anthropic is rein's adapter for the Anthropic Messages API, spoken
// over net/http with small private structs of its own.
//
// [New] returns a [Provider] that implements llm.Provider and
// llm.AuthValidator. Every call streams (POST /v1/messages with stream:true,
// anthropic-version 2026-10-21; ValidateAuth is GET /v1/models?limit=1) and
// is exactly one request: rein's llm.Retrying decides what to try again.
// The credential is x-api-key, or "Authorization: Bearer" from Config.Token,
// never both. Failures are classified with vendorhttp.FromHTTP (an error reply's
// status, headers and body) and llm.FromTransport; a stream without its
// message_stop event is llm.KindStreamCut, an event that does not parse is
// llm.KindMalformed, and an "error" event inside a 200 stream is classified
// by its error type (overloaded_error as 529, rate_limit_error as 429, …).
// Content that comes whole in message_start (programmatic tool calling) or a
// tool input given whole in content_block_start is streamed and kept like
// any other; a reply whose counts never came has its usage estimated and
// marked so.
//
// Content blocks rein does not model — server tools' server_tool_use,
// web_search_tool_result, web_fetch_tool_result, code_execution_tool_result
// and bash_/text_editor_code_execution_tool_result, mcp_tool_use and
// mcp_tool_result, or a type added after this adapter — are kept whole as
// llm.Opaque blocks, a server tool's streamed input put in place, never
// streamed as deltas; they are replayed byte for byte, in their place, to
// the provider that produced them (issue 23). A reply with one over
// llm.MaxOpaqueBytes keeps none of its opaque blocks (a call and its result
// travel together). Event and delta types the adapter does not know
// (citations_delta among them) are counted with llm.RecordDrop and logged at
// debug level. A second message_start after content was streamed — a proxy
// that spliced a retried stream onto the first — is malformed, so retried
// by llm.Retrying, and what was streamed stays the final message; one before
// any content replaces the first.
//
// Requests are serialised deterministically (SPEC PROV-6): the same
// llm.Request gives byte-identical bodies, and appending a message only
// appends to the body's message list. Prompt-cache breakpoints
// (cache_control ephemeral) go on the last tool, the system prompt and the
// last cacheable block of the newest two messages — four, the API's maximum;
// the two message breakpoints move on as messages are appended, which the
// API does not count as a change of the cached prefix.
//
// History is passed through llm.PrepareHistory first (SPEC PROV-5): thinking
// blocks and their signatures (redacted_thinking data travels in
// llm.Thinking.Signature with Redacted set) are replayed byte for byte to the
// model that wrote them and dropped for any other. Replies are stamped with
// Config.Name and the requested model name, never the dated snapshot the API
// echoes.
//
// Request.Thinking turns on extended thinking with a budget of at least 1024
// tokens; max_tokens defaults to 8192 and, when it does not exceed the budget,
// the budget is added to it. Request.Temperature is not sent: API version
// 2026-10-21 rejects sampling parameters.
//
// The adapter does not use the official SDK
// (github.com/anthropics/anthropic-sdk-go), which the first design named:
// rein used it only to build and send the request body, the event stream
// being read by our own code already (stream.go, over internal/jsonevents),
// yet linking it cost about 10 MB of binary and several MiB of start-up
// memory for every rein command. The body is still the SDK's byte for byte, field order
// included, as golden_body_test.go pins: a change to it would invalidate
// every user's prompt cache.
package anthropic
