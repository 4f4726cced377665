// Package gemini is rein's adapter for Google Gemini (SPEC PROV-2): the Gemini
// Developer API's generateContent, streamed as server-sent events
// (streamGenerateContent?alt=sse).
//
// [New] builds a [Provider] from a [Config]; its Stream turns an [llm.Request]
// into Gemini contents and yields the reply as [llm.Delta] values. Every call
// is exactly one HTTP request: the SDK's retries and automatic stream
// continuation are off, and [llm.Retrying] decides what to repeat (SPEC
// PROV-7).
//
// The official SDK, google.golang.org/genai, builds each request: it turns
// the genai contents and config into the REST body, joins the base URL, API
// version and model into the URL, and sets the API key and the extra headers;
// it also lists models for ValidateAuth. It does not read the streamed reply.
// The SDK exposes neither its request body nor its response body, so an
// [http.RoundTripper] wrapped around the configured client stops the streamed
// request at the wire, and the adapter sends it with that client and reads
// the events itself, into small private structs through one reused
// json.Decoder. The SDK's reader decodes every chunk into a map, converts the
// map and encodes and decodes it again into its types, some hundred
// allocations per delta; this reader needs a handful. Building the body
// ourselves was the other way, but the SDK's field mapping (thinkingConfig,
// parametersJsonSchema, the base64 of signatures and inline data) follows the
// API as it changes, and its output is what testdata/request.golden.json pins.
//
// How rein's model maps onto Gemini's:
//   - the system prompt is the systemInstruction; user turns are role "user",
//     assistant turns role "model";
//   - a Thinking block is a thought part carrying its thoughtSignature, and a
//     ToolUse.Signature is the thoughtSignature of its functionCall part;
//     signatures are kept as the base64 text the API sent and replayed byte for
//     byte to the same model only (SPEC PROV-5). A signature Gemini puts on a
//     text part becomes a text-less Thinking block and is put back on the part
//     next to it;
//   - older models send function calls without ids: the adapter makes up
//     unique ones ("call_<responseId>_<n>") and sends them back as
//     functionCall.id and functionResponse.id; a function response names its
//     tool, taken from the matching ToolUse in the history;
//   - the API sends a call's arguments whole, read into a map and written
//     back as the SDK did, so Input has sorted keys; they are yielded as one
//     DeltaToolInput piece;
//   - a tool result is the response {"output": text}, or {"error": text} when
//     IsError; images inside tool results move to a user turn first
//     ([llm.MoveToolResultImages]);
//   - usage: promptTokenCount includes cached tokens, so InputTokens is
//     promptTokenCount minus cachedContentTokenCount; OutputTokens is
//     candidatesTokenCount plus thoughtsTokenCount. Gemini reports no cache
//     writes; a reply without usageMetadata is estimated and marked
//     llm.Usage.Estimated;
//   - finish reasons: STOP is end_turn (tool_use when the reply calls tools),
//     MAX_TOKENS is max_tokens, and SAFETY, RECITATION, PROHIBITED_CONTENT,
//     BLOCKLIST, SPII and a blocked prompt are refusal.
//
// Errors keep the vendor's status, headers and body, so [llm.FromHTTP] sees
// the Retry-After header and the RetryInfo detail alike: the adapter reads a
// streamed call's error reply itself, and for ValidateAuth the transport
// wrapper records the failed reply before the SDK reads it. An error object
// sent inside a 200 stream is classified as if its code were the status.
package gemini
