// Package openai is rein's adapter for OpenAI's two APIs, and for any
// OpenAI-compatible server, spoken over net/http.
//
// [NewChat] speaks Chat Completions: POST {BaseURL}/chat/completions, streamed
// as `data:` chunks ending with `data: [DONE]`. It is also the way to every
// OpenAI-compatible endpoint — Ollama, vLLM, llama.cpp, DeepSeek, OpenRouter —
// by BaseURL, so it is lenient with what such servers send: usage may be
// missing (then it is estimated and marked llm.Usage.Estimated) or count
// reasoning outside completion_tokens (xAI, told by its total_tokens), tool
// calls may lack ids (they are synthesised) or arrive without an index,
// reasoning may come as `reasoning_content` (DeepSeek, vLLM, llama.cpp) or
// `reasoning` (Ollama, OpenRouter) deltas, content may be an array of typed
// text and thinking parts (Mistral's Magistral), and a stream that reported
// its finish reason is accepted without `[DONE]`. Visible reasoning goes back to
// the same model as `reasoning_content`; OpenRouter's `reasoning_details`
// (which carry the signatures of its upstream models) are kept whole as the
// thinking block's Signature and go back verbatim.
//
// [NewResponses] speaks the Responses API: POST {BaseURL}/responses with
// store=false and include=["reasoning.encrypted_content"], so that a
// reasoning item travels back to the same model as an [llm.Thinking] block
// {ID: "rs_…", Text: summary, Signature: encrypted_content} (SPEC PROV-5).
// Tool calls are function_call items keyed by call_id; tool results are
// function_call_output items. Output items of other kinds — server-side
// tools' web_search_call, code_interpreter_call, file_search_call, or a kind
// added after this adapter — are never decoded, so their fields cannot fail
// the stream: each is kept whole, in its final form, as an [llm.Opaque]
// block and replayed byte for byte in the next request's input (issue 23;
// one over llm.MaxOpaqueBytes drops the reply's opaque blocks, counted).
// Event types the adapter does not know are counted with llm.RecordDrop
// (the server tools' progress events and the .done/.added of parts, whose
// content comes again in the items, are known and skipped). A second
// response.created after content was streamed is a spliced stream:
// malformed, so retried. An incomplete reply stopped at max_output_tokens
// is llm.StopMaxTokens, by the content filter llm.StopRefusal; stopped for
// another reason it is llm.StopToolUse when its calls are all whole (each
// had its output_item.done) and llm.StopMaxTokens when one may be cut, so
// the loop answers every call either way (LOOP-5). An error event is read
// with its details at the top level (as documented) or nested in "error"
// (as sent). Chat Completions keeps nothing opaque: content parts of other
// types are counted as dropped, and an opaque block in the history (a
// Responses item under the same provider name) is left out and counted.
//
// Both serialise a request deterministically and send the request's CacheKey
// as prompt_cache_key, hashed when it is longer than OpenAI allows (SPEC
// PROV-6). OpenAI counts cached tokens inside the prompt; the adapters report
// llm.Usage.InputTokens as the uncached part. Neither API has an is_error flag
// on tool results, so a failed result's text is prefixed with "[error] ".
//
// The requests are small private structs of this package, encoded with
// encoding/json and sent with Config.HTTPClient; the replies' server-sent
// events are read by internal/jsonevents, shared by every adapter (a
// byte-order mark and keep-alive events with empty data are skipped there).
// Every call is exactly one HTTP request, and rein's llm.Retrying goes on
// top. Failures are *llm.Error values (SPEC PROV-7).
//
// The package does not use OpenAI's SDK (github.com/openai/openai-go), which
// it once did only to build and send three request bodies: linked in, the
// SDK added some 30 MB to the binary and several MiB to the start-up memory
// of every rein command, while the streams were already read by rein's own
// code. The bodies are byte-identical to the ones the SDK sent, which
// golden_body_test.go pins, so no prompt cache was lost in the change.
package openai
