package workspace

import (
	"slices"

	"github.com/reinhq/rein/permission"
)

// BuiltinPath is the Path of a built-in definition.
const BuiltinPath = "builtin"

// ExploreTools are the tools of the built-in explore agent: reading and
// searching, nothing that changes anything.
var ExploreTools = []string{"read_file", "list_dir", "glob", "grep", "web_fetch"}

const generalPrompt = `You are a general-purpose agent started by another agent to carry out one task on its behalf.

Work on the task you were given until it is done, using the tools you have. Read before you change anything, keep changes to what the task needs, and check your work where you can (build, tests).

When you finish, reply with a short report for the agent that started you: what you did, what you found, the files you changed (with paths), and anything left undone or uncertain. It sees only that reply, not your steps.`

const explorePrompt = `You are a read-only exploration agent started by another agent to search a codebase (and, when asked, the web) and report what you find.

Search broadly first (glob, grep, list_dir), then read the relevant parts of files. Never create, modify or delete anything, and never run commands: you only read.

Reply concisely with your findings: for each, the file path and line numbers (path:line) and a line or two on what is there. Say plainly what you looked for and did not find. The agent that started you sees only that reply.`

// BuiltinAgents returns the agents rein brings: general (every tool the
// parent has) and explore (read-only search that reports what it found).
// A user's or a workspace's agent of the same name replaces one.
func BuiltinAgents() []Agent {
	return []Agent{
		{Name: "explore", Description: "Read-only codebase search, reported as path:line; saves your context.",
			Tools: slices.Clone(ExploreTools), PermissionMode: string(permission.ModeReadOnly), Prompt: explorePrompt,
			Path: BuiltinPath, Origin: OriginBuiltin},
		{Name: "general", Description: "A self-contained task of several steps (research, changes, checks).",
			Prompt: generalPrompt, Path: BuiltinPath, Origin: OriginBuiltin},
	}
}
