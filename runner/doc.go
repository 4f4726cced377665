// Package runner is rein's one composition root: the only package that
// puts the agent loop, the tools, the permission policy, the hooks, the
// stores and the queue together. Every front — the Go library, the CLI and
// its terminal UI, `rein serve`, the IM gateway — runs conversations
// through it. It has four parts:
//
//	               workspace.Loaded + Config
//	                        │ NewSetup, WithModel
//	                        ▼
//	┌────────────────── Setup ───────────────────┐  built once, not changed:
//	│ model · system prompt parts · policy ·     │  model registry, permission
//	│ hooks · memory · MCP connections · agents  │  policy, hooks, memory, MCP
//	└──────────────────────┬─────────────────────┘
//	                       │ NewConversation (one per session)
//	                       ▼
//	┌──────────────── Conversation ──────────────┐  one session: Create/Resume,
//	│ session · Recorder · history · focus ·     │  Submit → agent.Run, every
//	│ usage · tools bound to the session dir     │  durable event journaled
//	└──────────────────────┬─────────────────────┘  before it is yielded
//	                       │ one Setup + Conversation per run
//	┌──────────────────── Service ───────────────┐  the server's and the
//	│ Submit (durable 202) · per-session lanes · │  gateway's Runtime: runs of
//	│ queue (split API/worker) · bus · recovery  │  one session in order, others
//	└──────────────────────┬─────────────────────┘  concurrently
//	                       │ Mirror.Notify after each run
//	                       ▼
//	           package mirror (the history mirror)
//
// [Setup] is what a workspace and its configuration determine; changing
// the model makes a new Setup sharing the rest ([Setup.WithModel]).
// [Conversation] is one session's conversation over a Setup: it binds a
// new or stored session (healing it, SPEC SESS-2), runs prompts
// ([Conversation.Submit], SPEC LOOP-1; [Conversation.SubmitMessage] for a
// message of text and images, LOOP-2) and compacts; its [Recorder] stores
// each durable event before it is yielded (SESS-1). [Service] runs the
// messages callers post to sessions (session.Submission): it stores a
// queued run, schedules it (API-3), and executes it in a fresh Setup and
// Conversation, publishing every event on the bus (API-2); with a queue it
// splits across processes (API-5). The history mirror (API-6) is package
// mirror, which the Service reaches through [Mirror].
//
// The files: setup.go (Config, Model, Setup), conversation.go, bind.go
// (Create, Resume, Heal), submit.go (Submit, Compact), dryrun.go (DryRun:
// the first request without calling the model), recorder.go;
// tools.go, capabilities.go, mcp.go, kb.go, memory.go, subagent.go and
// tenancy.go build what a Setup offers; images.go the images of a user
// message (mentions resolved in the workspace, submissions checked);
// service.go, schedule.go,
// execute.go, split.go, approve.go and callerrules.go are the Service;
// observe.go its metrics and traces.
package runner
