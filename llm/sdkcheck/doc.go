// Package sdkcheck checks rein's hand-written vendor adapters against the
// vendors' official Go SDKs (SPEC PROV-2). It holds no code, only tests, in
// a module of its own (github.com/reinhq/rein/llm/sdkcheck, which replaces
// github.com/reinhq/rein by ../..), so the SDKs are test-only references:
// neither rein's go.mod nor the rein binary links them (llm/gemini/doc.go
// and bench/README.md say why they left).
//
// The SDKs, pinned in go.mod:
//
//   - github.com/anthropics/anthropic-sdk-go/v2, for llm/anthropic (Messages API);
//   - github.com/openai/openai-go/v3, for llm/openai (Chat Completions, to
//     OpenAI and to an OpenAI-compatible server, and the Responses API);
//   - google.golang.org/genai, for llm/gemini (generateContent, streamed).
//
// What the tests prove, with every request sent only to an httptest server
// on 127.0.0.1:
//
//   - Request bodies (Test*RequestBodies). For each request of a table
//     (requests_test.go: a system prompt, multi-turn tool calls and results,
//     a failed result, images inline, by URL, without a media type and inside
//     a tool result, a thinking budget and an effort, signed and redacted
//     thinking in the history, tool specs with nested JSON schemas, stop
//     sequences, temperature, a cache key, max tokens, empty text and tool
//     input), the body rein's adapter sends equals, as JSON values, the body
//     the SDK sends for the same request built with the SDK's own types
//     (anthropicParams, chatParams, responsesParams, geminiParams, each
//     following the mapping its adapter's package doc describes); so do the
//     endpoint path and query and the named headers. Prompt-cache
//     breakpoints are part of the body and compared too. Every intended or
//     known difference is an entry of bodyAllowances, for one API and one
//     row, with its reason; an allowance that no longer matches anything
//     fails the test.
//   - Stream decoding (Test*Streams). Every stream under testdata/streams
//     (copied from the adapters' tests, each file naming its source, plus
//     one complete typical stream per API written from the vendor's
//     documented format) is decoded by rein's adapter and by the SDK —
//     anthropic Message.Accumulate, openai ChatCompletionAccumulator, the
//     Responses stream events (the final response's output, else the
//     output_item.done items), genai GenerateContentStream's chunks — and
//     the final messages compared: text, thinking and its signature,
//     redacted thinking, tool calls (id, name, arguments as JSON), stop
//     reason (the SDK's mapped by the vendor's documented meaning) and
//     usage. Every difference is a named entry of the API's known list
//     (anthropicKnown, chatKnown, responsesKnown, geminiKnown), counted and
//     logged (go test -v -run Streams shows the counts); a new difference,
//     or a listed one no longer seen, fails the test. Blocks rein does not
//     model (server tool calls and their results, output items of other
//     kinds) are kept as llm.Opaque and compared, type and JSON, with the
//     SDK's. The lists hold what rein reads that the SDK cannot
//     (OpenAI-compatible extensions, keep-alive events, byte-order marks,
//     SSE comments), what rein does on purpose (estimated usage, made-up
//     call ids, a cut tool input kept), and any content rein would drop
//     that the SDK keeps.
//
// scripts/test runs these tests after the root module's; they need the Go
// module proxy only to download the SDKs. Since this module requires rein
// through its replace, a change of rein's go.mod must be followed by
// `go mod tidy` here: scripts/test checks it (go mod tidy -diff) and says so.
//
// To update an SDK: look its newest version up with
// `go list -m -versions MODULE` (a new major version is a new module path,
// /v3 for instance: change the imports too), then in llm/sdkcheck run
// `go get MODULE@VERSION && go mod tidy` and `go test -count=1 ./...`. A
// failure is the point of the exercise: a body difference means the SDK
// now writes the request otherwise (rein's adapter may have to follow, and
// its golden body with it: mind the prompt caches, SPEC PROV-6); a stream
// difference means the SDK now reads the stream otherwise. Fix the adapter
// or, for a difference that is intended, add an entry with its reason.
package sdkcheck
