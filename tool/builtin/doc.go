// Package builtin holds rein's built-in tools (SPEC TOOL-3): read_file,
// write_file, edit_file, multi_edit, list_dir, glob, grep, web_fetch,
// web_search, todo_write and ask_user (bash lives in bash*.go), and a
// session's background jobs (SPEC TOOL-8: [Jobs], [JobTools], jobs*.go).
//
// File tools read and write through an [exec.Backend], so they honour the
// sandbox the harness runs in; relative paths resolve against the call's
// WorkDir. list_dir, glob and grep walk the host file system directly (they
// only read), skipping .git and what .gitignore files exclude.
//
// Per-session state lives in small stores the run loop owns and can persist:
// a [FileTracker] records which files were read and changed (SPEC TOOL-6
// read-before-edit, LOOP-11 task focus), and [Todos] holds the todo list.
// Front ends plug in through interfaces: an [Asker] answers ask_user, a
// [SearchBackend] serves web_search. Every failure the model can fix is a
// tool.Result with IsError and a message saying what to do next.
package builtin
