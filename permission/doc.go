// Package permission decides whether a tool call may run (SPEC PERM-1 …
// PERM-4, PERM-7).
//
// A [Policy] turns a [Request] (tool name, input, [tool.Meta], workspace) into
// an [Outcome]: allow, ask or deny, with a reason and the [Rule] that decided.
// The policy built by [NewPolicy] applies, in order: deny rules from every
// layer, the built-in denies (sensitive files such as .env and keys; anything
// that changes state in read-only mode; in plan mode anything but reads,
// read-only commands and the session's plan file — plan.go), the plan
// approval (exit_plan_mode asks in plan mode, and only there), ask rules, the asks of every mode
// (a dynamic shell command when shell deny or ask rules exist; a change to
// the files that decide what runs: .rein, .claude, .git/hooks, .git/config),
// the other built-in asks (shell commands that cannot be parsed or are
// dynamic, redirections out of the workspace), allow rules (not in strict
// and plan mode), and last the [Mode]'s default for the tool's category. Deny always wins.
//
// Rules read like `bash(git diff:*)`, `read_file(src/**)`,
// `web_fetch(domain:example.com)`, `mcp__github__*` or `Action(deploy)`
// ([ParseRule]); Claude Code's tool names work as in Claude Code
// (`Edit(config/**)` covers every tool that edits files). `Action(name)`
// names a workspace action (SPEC ACTION-1), wildcards allowed
// (`Action(deploy_*)`, `Action(*)`), and never a built-in or MCP tool of the
// same name: it looks at the [Request]'s Origin. Shell commands are parsed for real
// (internal/shellparse, over mvdan.cc/sh): an allow rule covers a command
// only when it covers every simple command in it, so `git diff; rm -rf x` is
// not `git diff`; deny and ask rules see through wrappers (`sudo /bin/rm`),
// nested scripts and find's -exec and -delete; and a script whose meaning
// depends on values known only when it runs (arithmetic, indirect
// expansion, computed program names) is never allowed by a command rule.
//
// When the outcome is ask, [Ask] puts a [Prompt] to an [Approver] (the CLI, an
// HTTP client, a callback) with a timeout after which the answer is deny; an
// "always" answer carries rules that an [Engine] (or any [RuleStore], such as
// a [FileStore]) keeps. Every decision and call is written to an [Auditor]
// as an [AuditRecord] whose input has its secrets redacted.
package permission
