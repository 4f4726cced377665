// Package acp is rein's Agent Client Protocol front (SPEC FRONT-1): an
// ACP agent over a byte stream — stdio under `rein acp` — that editors
// (Zed, JetBrains, Neovim's CodeCompanion) drive as their coding agent.
// It speaks the protocol through github.com/coder/acp-go-sdk and runs
// every session through package runner, like every other front: one
// [runner.Setup] and [runner.Conversation] per ACP session.
//
// What it does, by method:
//   - initialize answers the capabilities it has, no more: loadSession,
//     prompt images and embedded context, session list, resume and close,
//     the client's MCP servers over stdio, HTTP and SSE. It keeps the
//     client's: with fs, the file tools read and write through the
//     editor (files.go, over runner.FileAccess: only text inside the
//     workspace, after rein's policy, fence and sandbox). The editor's
//     terminal is never used: it would run commands outside the sandbox.
//   - session/new, session/load (the whole stored conversation replayed as
//     session/update notifications before it answers, SPEC SESS-3),
//     session/resume (no replay), session/list and session/close; the
//     client's mcpServers join the workspace's in a trusted workspace
//     (mcp.go, runner.Setup.AddMCPServers), else they are refused.
//   - session/prompt runs one user message (text, images, resources;
//     LOOP-1) and streams its events as updates: message and thought
//     chunks, tool calls with their kind and, for edits, a diff; the todo
//     list as a plan; each model call's context use as a usage_update.
//     Its stop reason is the run's.
//   - permission questions go to the client as session/request_permission
//     (PERM-3); an "always" answer keeps a rein rule, as the CLI's does.
//   - session/cancel stops the running prompt, which answers cancelled.
//   - session/set_mode switches the session's permission mode (PERM-1).
//
// The files: serve.go (Serve, Config, the connection), agent.go (the
// session methods), prompt.go (a prompt's content and its run),
// update.go (events to updates, tool kinds and diffs), approve.go
// (permission questions), replay.go (a stored conversation as updates),
// mode.go (the modes offered), files.go (the editor's files), mcp.go (the
// client's MCP servers).
package acp
