// Package memory is rein's cross-session memory (SPEC MEM-1 … MEM-4): a
// user profile and fact notes, kept as plain Markdown that people may edit,
// frozen into the system prompt at the start of every run.
//
// Memory lives in two scopes. The user scope (<config dir>/memory/) holds
// USER.md, the profile (who the user is, preferences, style, stack), and
// NOTES.md, notes for every workspace; the workspace scope
// (<root>/.rein/memory/) holds the workspace's NOTES.md. Each file is a
// heading and a list: one top-level "- " item per entry, continuation lines
// and fenced code indented under it ([Parse], [File.Render]). MEMORY.md, the
// index, is rewritten on every change for people to read; rein never reads
// meaning from it. Each file has a hard cap in characters.
//
// A [Store] reads both scopes into a [Snapshot] and changes one file at a
// time — [Store.Add], [Store.Replace], [Store.Remove] — under a lock file,
// read-modify-write, written atomically. Every write is scanned first
// ([Scan]: prompt injection, secret exfiltration, invisible Unicode,
// disguises, standing orders) and refused with the reason; a duplicate is
// a no-op; a write over the cap is refused with a message asking to
// condense. Entries read from disk are scanned too: those that fail are
// withheld from the prompt [Section] and reported, with the rule that
// matched ([Finding].Rule), in Snapshot.Warnings, never dropped silently.
// [ScanDocument] is the scan for instructions meant for the model (AGENTS.md,
// skills, agents), which flags only the strong signals.
package memory
