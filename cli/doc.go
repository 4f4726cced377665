// Package cli is the rein command (SPEC CLI-1 … CLI-4): one-shot runs
// (`rein run`), the interactive session (`rein` on a terminal, drawn by
// package cli/tui), and the commands around them — provider profiles,
// sessions, configuration, workspace trust (`rein trust`), `rein init`,
// `rein doctor` and `rein version`.
//
// The model: an [App] is the command's world (streams, environment, working
// directory), so tests run the CLI in-process. Every command that talks to a
// model builds an engine (runner.Setup and runner.Conversation): the configuration resolved from its layers
// (package workspace: flags > REIN_* > .rein/settings.yaml >
// ~/.config/rein/settings.yaml > defaults), a provider resolved through
// llm/registry (or a cassette of llm/replay, for `--model replay:PATH`), the
// built-in tools, the permission policy, the hooks, and a session kept by
// session/jsonl. What a workspace brings that widens permissions or runs
// code applies only once the user trusted it (SPEC PERM-5): the interactive
// session asks at start, a one-shot run warns and goes on without it. The
// conversation's Submit turns one prompt into one agent run
// whose durable events are journaled as they happen; `rein run` writes the
// events in the chosen output format, the terminal UI draws them.
//
// Exit codes follow the run's termination reason (see `rein run --help`);
// 2 is a usage error. rein does no work of its own before flags are parsed
// (no package-level initialisation; `rein --version` skips even the command
// tree), and the provider, tools and session are built only by the commands
// that need them.
package cli
