// Package mcptool turns MCP servers into rein tools (SPEC MCP-1), over the
// official go-sdk (github.com/modelcontextprotocol/go-sdk).
//
// [Start] connects to every configured [Server] in parallel — a command
// speaking MCP on its stdin and stdout, or a streamable HTTP endpoint — and
// returns a [Manager] once each is ready or has failed. A server that fails
// does not fail the others: its [Status] says why, and it is retried in the
// background with exponential backoff. A connection that drops is
// re-established the same way; a call made meanwhile waits for it, up to the
// call's timeout.
//
// [Manager.Tools] gives one [tool.Tool] per server tool, named
// mcp__<server>__<tool>, in a stable order. Their [tool.Meta] is the
// conservative default (not read-only, not concurrency-safe, category
// other) whatever the server's annotations say: annotations are hints from a
// third party, shown by [Tool.Annotations] but never trusted. A call's
// failures (a timeout, a dead connection, a protocol error) come back as
// error results, never as Go errors. [Manager.Resources], [Manager.Prompts]
// and the tools of [Manager.ResourceTools] reach the servers' resources and
// prompts.
//
// What servers put in front of the model is bounded and screened (SPEC
// MCP-2). Each server's instructions and tool definitions (names,
// descriptions, every text of the input schemas) go through
// [Options.Screen] (the runner passes the memory scanner's document rules)
// when its list is fetched; a server with findings is withheld — left out
// of [Manager.Tools], its calls and its resources refused — until
// [Options.Accepted] accepts the [Screening.Hash] of what was flagged (the
// runner keeps the user's acceptances). A [Budget]
// bounds the MCP tool definitions of one request; above it the runner
// defers the tools ([tool.Set.AddDeferred]) and offers [Search], the
// mcp_tool_search tool, which loads them within the same budget.
//
// Each stdio server runs in its own process group with exactly the
// environment its [Server] gives, and [Manager.Close] kills the group: no
// server outlives the manager.
package mcptool
