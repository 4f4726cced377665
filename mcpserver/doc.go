// Package mcpserver is rein as an MCP server (SPEC FRONT-2): `rein mcp
// serve` offers an MCP client — Claude Code, an IDE, the MCP Inspector —
// tools to run a prompt in a workspace and get its answer, cost and
// session id (LOOP-1), to continue a session, and to list and read the
// stored sessions (SESS-3). It is a front like the CLI and the server:
// every run goes through package runner (a Setup the front opens for the
// workspace, a Conversation per call), so the agent loop, the tools, the
// permission policy and the session journal are rein's own.
//
// Permission questions (PERM-3) go to the MCP client as elicitation
// requests when the client declared the elicitation capability: accept
// runs the call (once, or always when the form's "always" box is
// ticked and the policy suggested a rule), decline or cancel denies it.
// A client without elicitation leaves the configured permission mode to
// decide, as `rein run` without a terminal does: a call that would ask is
// denied.
//
// Confinement: a run's workspace is the directory rein was started in
// (Config.Root) or one below it; sessions are listed, read and continued
// only when their workspace is. Over streamable HTTP ([Server.Handler])
// every request must carry the server's bearer token (auth.go: compared
// in constant time), the front listens on loopback only, and a request
// whose Host is not a loopback name or which carries an Origin (a web
// page) is refused, so a page the user visits cannot drive rein (DNS
// rebinding, cross-site requests; docs/security.md).
//
// A session runs one run at a time (holds.go): the session store's lock
// keeps other processes out, not a second run of this one.
//
// The files: server.go (Config, the server, its transports), tools.go
// (the tools' inputs, outputs and handlers), runs.go (a run in flight,
// parked questions), holds.go (one run per session), approve.go (elicitation),
// guard.go (the HTTP Host and Origin checks), auth.go (the bearer
// token), confine.go (workspace and
// session confinement).
package mcpserver
