// Package command turns a custom slash command typed as "/NAME ARGS" into
// the prompt a run sends (SPEC COMPAT-1, CLI-1): the commands are Markdown
// files (workspace.Command, loaded with the other definitions from
// .rein/commands, .claude/commands, the user's commands directory and
// ~/.claude/commands), written in Claude Code's format.
//
// Expanding one ([Expand]) does, in the body's order:
//
//   - Arguments. $ARGUMENTS is the whole argument string as typed;
//     $ARGUMENTS[N] and $N are the arguments split shell-style (quotes
//     group words and are removed) and counted from 0 — $0 is the first
//     — as Claude Code does since v2.1.19 (its 2025 documentation counted
//     $1 as the first: a command written then must be renumbered). A
//     positional argument not given stays as written ($2 with one
//     argument); a backslash before the $ writes it literally (\$1).
//     When the body uses none of these and arguments were given, they are
//     appended as a last line "ARGUMENTS: …", as in Claude Code.
//   - Preludes: !`cmd` (at the start of a line or after a blank) and
//     fenced ```! blocks run before the prompt is sent, and their output
//     (stdout and stderr) replaces them. They run only through a [Shell]
//     (the runner's: the bash tool's sandbox and the permission policy,
//     never asking — what the policy would ask about must be granted by
//     the command's allowed-tools), and only in a trusted workspace; a
//     prelude that fails, or is refused, stops the whole command. Within a
//     prelude, arguments are substituted shell-quoted: an argument is one
//     word, never more shell syntax. Only the command's own body holds
//     preludes: an argument that looks like one, or the output of one, is
//     text.
//   - Files: an `@path` of the body (or of an argument) naming a text file
//     of the workspace pastes its content after the prompt, as Claude
//     Code does (attachment.Resolver.Text: inside the workspace, not a
//     sensitive file, bounded; the permission policy's read rules apply
//     through [Env.Readable]). A mention of nothing (@team) is left as
//     written; of an image, it is attached as any prompt's image mention.
//
// allowed-tools becomes allow rules for the run the command starts
// ([Expansion.Grant]): calls they cover run without asking in that run
// only, as in Claude Code; deny and ask rules and rein's built-in checks
// still come first. model names the model of that run (an alias such as
// haiku resolves as everywhere).
//
// The files: doc.go, line.go (the "/NAME ARGS" line and the arguments),
// template.go (the body's parts and the argument substitution), expand.go
// (the expansion, preludes and files).
package command
