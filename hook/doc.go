// Package hook runs user code at the points of a run's life (SPEC HOOK-1 …
// HOOK-3), compatible with Claude Code's hooks.
//
// An [Event] (session_start, pre_tool_use, stop, …) fires with an [Input],
// the JSON object hooks receive on stdin or in a POST body. A [Hook] answers
// with an [Outcome]: continue, or block with a reason shown to the model;
// a rewritten tool input; context to add; for stop, a forced continue.
// Lifecycle events only observe; the interceptor events ([Event.CanBlock])
// may block.
//
// Hooks are Go functions ([Func]), shell commands ([Command]: JSON on stdin,
// JSON on stdout, exit code 2 blocks with stderr as the reason) or HTTP
// endpoints ([HTTP], posting through a [Poster]: package hook/httphook is
// the net/http one, so the core links no HTTP client). A [Registry] holds them per event with a tool-name
// matcher, a priority and a timeout, and [Registry.Fire] runs the matching
// ones in order and merges their outcomes. A hook that fails or hangs is
// logged, audited and skipped, never crashing the run, unless it is declared
// on_failure: block — a guard that must fail closed.
//
// [Parse] reads `.rein/hooks.yaml` and Claude Code's settings.json `hooks`
// object alike; hooks declared the Claude Code way receive what Claude Code
// sends (claude.go): its event and tool names, its tool_input fields with
// absolute paths, its tool_response objects, its permission modes; their
// updatedInput is mapped back. Their output is read as Claude Code reads
// it: exit code 2 blocks, other codes are non-blocking errors unless
// stdout is valid JSON output, texts are capped at [MaxText]. See
// docs/hooks.md.
//
// Hooks run with a clean environment (SPEC PERM-5): a command gets only
// [BaseEnv] (PATH, HOME, USER, the locale, TZ, TMPDIR, SHELL, the terminal
// and desktop session), CLAUDE_PROJECT_DIR, REIN_PROJECT_DIR and
// REIN_HOOK_EVENT, plus the variables its declaration names — `env:
// [GITHUB_TOKEN]` in hooks.yaml. Provider keys and other secrets never
// reach a hook that did not name them. Claude Code's settings.json has no
// such field for commands, so its command hooks get the base set. An HTTP
// hook's header values may refer to variables ($NAME, ${NAME}); only those
// it names (env, or allowedEnvVars in Claude Code's format) are filled in,
// any other reference becomes empty. Which files' hooks run at all is the
// caller's decision: rein runs a workspace's hooks only once the user
// trusted the workspace.
package hook
