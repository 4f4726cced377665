package cli

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/workspace"
)

// changingTools are the tools read-only mode denies whatever the rules say
// (they can change things): a tools entry with a rule on one of them can
// never run under an agent's read-only mode.
var changingTools = []string{"bash", "write_file", "edit_file", "multi_edit"}

// checkAgentTools reports the entries of agents' tools lists that cannot
// do what they say (SPEC WS-1, COMPAT-1): a rule on a tool the agent's own
// permission mode denies outright (`bash(git diff:*)` under
// permission_mode: read-only), and a Claude Code-style name no tool
// answers to (`Bsh`). Agents of an untrusted workspace are checked too, so
// they can be fixed before trusting it; rein's built-in agents are not.
func checkAgentTools(r *report, l *workspace.Loaded) {
	for _, a := range l.AllDefinitions().Agents {
		if a.Origin == workspace.OriginBuiltin {
			continue
		}
		for _, w := range agentToolProblems(a) {
			r.add("agents", statusWarning, fmt.Sprintf("agent %s (%s): %s", a.Name, displayPath(l, a.Path), w.msg), w.next)
		}
	}
}

// agentProblem is one finding of [agentToolProblems].
type agentProblem struct{ msg, next string }

// agentToolProblems checks one agent's tools list.
func agentToolProblems(a workspace.Agent) []agentProblem {
	var out []agentProblem
	for _, e := range a.Tools {
		name, rule, err := workspace.SplitToolEntry(e)
		if err != nil {
			continue // reported when the definition loaded
		}
		if _, claude := tool.ClaudeToolNames[name]; !claude && !slices.Contains(tool.ClaudeNoEquivalent, name) && startsUpper(name) {
			out = append(out, agentProblem{fmt.Sprintf("tools: %s names no tool: the agent runs without it", name),
				"write one of rein's tool names (read_file, bash, …) or Claude Code's (Read, Bash, …); rein agents list shows the agent's tools"})
			continue
		}
		if rule == nil || permission.Mode(a.PermissionMode) != permission.ModeReadOnly {
			continue
		}
		for _, t := range toolsOf(name) {
			if slices.Contains(changingTools, t) {
				out = append(out, agentProblem{fmt.Sprintf("tools: %s can never run: its permission_mode read-only denies %s whatever the rules say", e, t),
					"remove permission_mode: the tools list already limits " + t + " to the calls its rules match"})
				break
			}
		}
	}
	return out
}

// toolsOf returns the rein tools a tools entry's name stands for.
func toolsOf(name string) []string {
	if rein, ok := tool.ClaudeToolNames[name]; ok {
		return rein
	}
	return []string{strings.ToLower(name)}
}

func startsUpper(s string) bool {
	for _, r := range s {
		return unicode.IsUpper(r)
	}
	return false
}
