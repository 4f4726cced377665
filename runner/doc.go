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
// The files:
//   - the Setup: setup.go (Config, Model, Setup), tools.go (the session's
//     tools and where commands run), capabilities.go, mcp.go and
//     mcpreview.go (skills, actions, MCP servers and their review), kb.go,
//     memory.go, subagent.go (the task tool), agentdefs.go and
//     agentscope.go (agent definitions and their tool rules), plan.go (plan
//     mode's approval), tenancy.go (a server's confinement), contentscan.go;
//   - the Conversation: conversation.go, bind.go (Create, Resume, Heal),
//     submit.go (Submit, Compact), images.go (a user message's images),
//     jobs.go (background jobs), dryrun.go (the first request without a
//     model call), recorder.go, hooklog.go;
//   - the Service: service.go, schedule.go, execute.go, split.go,
//     approve.go, callerrules.go, sessionmode.go (a session's own
//     permission mode, PERM-7), servicejobs.go (sessions' background
//     jobs, which outlive their runs); observe.go its metrics
//     and traces.
package runner
