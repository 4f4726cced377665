// Package llm is rein's model of a conversation with a large language model and
// the one interface every vendor adapter implements.
//
// A conversation is a slice of [Message]; a message holds typed content blocks
// ([Text], [Image], [Thinking], [ToolUse], [ToolResult], and [Opaque] for
// vendor content rein does not model, replayed only to its producer). A [Provider] takes a
// [Request] and streams [Delta] values that end with a [DeltaDone] carrying the
// complete [Response]; [Complete] consumes such a stream. Failures are typed
// [*Error] values whose [ErrorKind] says whether to retry ([Error.Retryable]),
// compact (KindContextOverflow) or give up. [Retrying] wraps any provider with
// the one retry policy of rein (SPEC PROV-7). What an adapter's stream decoder
// drops is counted with [RecordDrop] and read with [Drops].
//
// The package is the leaf of rein: it imports only the standard library, and no
// vendor type ever appears here. Nor does HTTP: classifying a vendor's HTTP
// error reply and guarding the adapters' redirects is llm/vendorhttp's work,
// so the core packages that import llm do not link net/http.
package llm
