// Package agent is rein's run loop: one user message in, rounds of model calls
// and tool calls out, as a stream of typed [Event] values (SPEC LOOP-1).
//
// A run reads like prose: [Agent.Run] → turn → callModel / runTools. Each turn
// sends the history and the tool list to the model, streams the reply as text
// and thinking deltas, and — only once the reply is complete (SPEC LOOP-5) —
// runs the tools it asked for: read-only ones in parallel, the others one at a
// time, results written back in declaration order whatever order they finish
// in (SPEC LOOP-6). Every tool call passes the same pipeline: lookup, schema
// validation, pre_tool_use hooks, permission, execution, post hooks, audit.
//
// The package has no I/O of its own. Models, tools, permissions, hooks and
// compaction arrive through interfaces; persistence is the caller's: every
// durable change to the conversation is an [EventMessage] event, and a run
// always ends with exactly one [EventDone].
//
// A caller that only wants the result uses [Agent.Complete], which drains
// the same stream and returns the done event:
//
//	done, err := agent.New(cfg).Complete(ctx, agent.Input{Prompt: &msg, WorkDir: dir})
//	if err != nil { … }
//	fmt.Println(done.Reason, done.Text)
package agent
