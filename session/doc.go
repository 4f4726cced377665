// Package session keeps conversations: a [Session] is metadata plus an
// append-only log of [Entry] values (SPEC SESS-1 … SESS-4).
//
// The log holds every message appended to the conversation, a record of each
// run (usage, cost, statistics), compactions (which replace the history so
// far), the task focus, and a journal of tool calls: a call's start is
// appended before the tool runs, and the process group of a command as soon
// as it exists. [Load] replays the log into a [State] and heals it ([Heal],
// SPEC SESS-2): a crash at any instant leaves a conversation that satisfies
// the pairing invariant (llm.CheckPairing), with the calls that were cut off
// answered by results saying so, and their processes listed in
// [State.Pending] so they can be stopped ([StopPending]).
//
// A [Store] persists sessions. [NewMemStore] keeps them in memory (tests);
// session/jsonl keeps them in crash-safe files (the CLI default); every store
// passes the conformance suite in session/sessiontest. The Recorder of
// package runner turns a run's events into durable entries as they happen;
// this package knows entries, never the run loop's types.
//
// # Fencing
//
// SPEC API-5: the run queue (runner/queue) hands a session to one
// worker at a time with a lease that carries a fencing token: an int64
// strictly increasing per session across holders, processes and restarts.
// A lease can run out without its holder noticing (a paused process), so
// the store is the last guard: a worker puts its lease's token in the
// context of every write of the session ([WithFence]), and a store shared
// by several processes refuses a write whose token is below the highest it
// has seen for the session.
//
// The contract, for a store that enforces it: a write of session S made
// with a context that carries a token for S ([FenceOf]) first raises S's
// fence to the token, when the token is higher, and is refused with an
// error wrapping [ErrFenced], with nothing of the call written, when the
// token is below the fence. A token equal to the fence passes (the holder
// writing again). The check and the write are one atomic step: once a
// write with token T has succeeded, no write of S with a token below T
// succeeds. The writes of S are:
//
//   - Store.Append (of at least one entry), Store.Update, Store.Rewrite and
//     Store.Delete of S;
//   - Ledger.UpdateRun of a run of S (the run's stored session), and
//     Ledger.AppendEvents and Ledger.AppendAudit of events and records of
//     S (a batch holding several sessions is checked against the fence of
//     each one the context carries a token for).
//
// A write without a token for S is not checked and leaves the fence as it
// is: the API process's own writes (creating a session, queueing a run,
// cancelling a queued run) carry none. Store.Create and Store.Fork create
// new sessions and are never checked; a token for another session does not
// fence S. Deleting S may drop its fence with it.
//
// Stores that serve one process ([NewMemStore], [MemLedger], session/jsonl,
// session/sqlite) have one holder at a time by construction and may ignore
// tokens. The shared store, session/postgres, enforces them.
package session
