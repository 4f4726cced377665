// Package gemini is rein's adapter for Google Gemini (SPEC PROV-2): the Gemini
// Developer API's generateContent, streamed as server-sent events
// (streamGenerateContent?alt=sse).
//
// [New] builds a [Provider] from a [Config]; its Stream turns an [llm.Request]
// into Gemini contents and yields the reply as [llm.Delta] values. Every call
// is exactly one HTTP request: [llm.Retrying] decides what to repeat (SPEC
// PROV-7).
//
// The adapter speaks the REST API over net/http itself, with small private
// structs for the request body (request.go) and a reader of the event stream
// that decodes each chunk through one reused json.Decoder (stream.go). It
// does not use Google's SDK, google.golang.org/genai, which the first design
// named: that package initialises go-cmp at package init (its replay client
// lives in the non-test package) and links Google's credentials stack (grpc,
// whose x/net/trace reaches text/template at init). Either makes the Go
// linker keep every exported method of every type in the binary, since
// reflect's Method and MethodByName become reachable: rein was 141 MB and
// touched 44.8 MiB at `rein --version` with it, 89 MB and 33.5 MiB without
// it and the OTLP exporter (bench/README.md, "Start-up"). The body follows
// what the SDK sent field for field (testdata/request.golden.json was
// written by the SDK; only the tool schemas now go as they are, keys
// unsorted).
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
//     back, so Input has sorted keys; they are yielded as one DeltaToolInput
//     piece, and sent back with sorted keys and their numbers unchanged;
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
//     BLOCKLIST, SPII and a blocked prompt are refusal;
//   - parts rein has no block for (inlineData, fileData, executableCode,
//     codeExecutionResult, functionResponse) are not kept, but counted by
//     type with llm.RecordDrop (issue 23); the history never holds an
//     llm.Opaque block of this provider, and another's is left out by
//     llm.PrepareHistory.
//
// Errors keep the vendor's status, headers and body, so [vendorhttp.FromHTTP] sees
// the Retry-After header and the RetryInfo detail alike. An error object
// sent inside a 200 stream is classified as if its code were the status.
package gemini
