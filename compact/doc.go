// Package compact keeps a conversation inside a model's context window (SPEC
// CTX-1 … CTX-6). A [Compactor] implements agent.Compactor.
//
// The model: the budget is the context window minus the reserved output, the
// system prompt and the tool definitions (CTX-2). Before every request the
// loop calls [Compactor.Fit]; the history's size is estimated with package
// tokens, message by message (cached by position and identity), and replaced
// by the provider's own count whenever one is known ([Compactor.ObserveUsage],
// wired by [Compactor.Observe]). While the history stays under the first
// threshold Fit returns it untouched — the same slice — so the prompt-cache
// prefix is never rewritten between compactions (CTX-5).
//
// Above a threshold, layers run in order, each only while the estimate is
// still above its own threshold, re-estimating after each (CTX-3):
//
//   - snip (default 50% of the budget): old tool outputs keep their first
//     and last lines and say what was cut; no model call. It trims oldest
//     first, whole blocks, down to a low watermark (SnipTarget, 12%), and
//     never rewrites a snipped output again. When it cannot get that low —
//     the notes of earlier snips and the newest outputs fill it, so it
//     would run again within a few turns and then every turn — a summary of
//     everything before the recent tail takes its place (the tail keeps
//     the snips made in it): the context shrinks in one large step instead.
//   - summarize (60%, the watermark): the model summarises everything before a
//     recent tail; the summary request is the conversation itself (system,
//     tools, messages, byte for byte) plus one instruction, so a prompt cache
//     serves almost all of it. The summary replaces those messages as one user
//     message. When the call fails, an extractive summary built without a
//     model (goals, files, commands, errors, decisions, todo list) takes its
//     place and the layer is reported as "extractive".
//   - collapse (90%): the summary plus only the last few messages; oversized
//     tool outputs in those are snipped as a last resort.
//
// Every compaction that rewrites the history logs one debug line, "compact:
// prefix rewrite", naming the first message and block a prompt cache no
// longer serves, why the pass ran, what it did and the tokens before and
// after; [CacheMeter] counts the same breaks from the requests sent.
//
// Every cut lands on a clean boundary: the retained tail never starts with a
// tool result whose call was summarised away, and an assistant message is
// never parted from its results (CTX-4, LOOP-5). Kept assistant messages are
// the very same values, thinking signatures included. If the history still
// does not fit after every layer, compaction fails with an *llm.Error of kind
// llm.KindContextOverflow rather than loop (CTX-6).
package compact
