package tool

// ClaudeToolNames maps each Claude Code tool name to the rein tools it
// stands for, so that permission rules, hooks and agents' tool lists
// written for Claude Code keep working (SPEC COMPAT-1). It is the one table
// of these names: the permission rules, the hook matchers and the agents'
// `tools:` read it. Claude's Edit covers rein's edit_file and multi_edit;
// MultiEdit is multi_edit alone. Old names stay beside the new ones
// (Task/Agent, BashOutput/TaskOutput, KillShell/KillBash/TaskStop,
// SlashCommand/Skill): a configuration may predate a rename.
//
// Some rein tools named here are not in every build: job_output and
// job_kill come with background jobs (TOOL-8), exit_plan_mode with plan
// mode (PERM-7). An agent naming one where it is absent is told "not
// available in this build"; [ClaudeNoEquivalent] are the names rein has no
// tool for at all.
var ClaudeToolNames = map[string][]string{
	"Bash":            {"bash"},
	"Read":            {"read_file"},
	"Edit":            {"edit_file", "multi_edit"},
	"MultiEdit":       {"multi_edit"},
	"Write":           {"write_file"},
	"Glob":            {"glob"},
	"Grep":            {"grep"},
	"LS":              {"list_dir"},
	"WebFetch":        {"web_fetch"},
	"WebSearch":       {"web_search"},
	"TodoWrite":       {"todo_write"},
	"Task":            {"task"},
	"Agent":           {"task"},
	"TaskOutput":      {"job_output"},
	"BashOutput":      {"job_output"},
	"TaskStop":        {"job_kill"},
	"KillShell":       {"job_kill"},
	"KillBash":        {"job_kill"},
	"ExitPlanMode":    {"exit_plan_mode"},
	"Skill":           {"skill"},
	"SlashCommand":    {"skill"},
	"AskUserQuestion": {"ask_user"},
}

// ClaudeNameOf maps a rein tool to its Claude Code name, the name hooks
// declared the Claude Code way receive (multi_edit → MultiEdit): the
// current name where Claude Code renamed a tool, except task, which hooks
// have always received as Task. Every entry is the inverse of one in
// [ClaudeToolNames].
var ClaudeNameOf = map[string]string{
	"bash":           "Bash",
	"read_file":      "Read",
	"edit_file":      "Edit",
	"multi_edit":     "MultiEdit",
	"write_file":     "Write",
	"glob":           "Glob",
	"grep":           "Grep",
	"list_dir":       "LS",
	"web_fetch":      "WebFetch",
	"web_search":     "WebSearch",
	"todo_write":     "TodoWrite",
	"task":           "Task",
	"job_output":     "TaskOutput",
	"job_kill":       "TaskStop",
	"exit_plan_mode": "ExitPlanMode",
	"skill":          "Skill",
	"ask_user":       "AskUserQuestion",
}

// ClaudeNoEquivalent are Claude Code tools rein has no tool for; an agent
// naming one is told so, and the rest of its tools still apply.
var ClaudeNoEquivalent = []string{
	"NotebookEdit", "NotebookRead", "EnterPlanMode", "ToolSearch", "ListMcpResourcesTool",
	"ReadMcpResourceTool", "PowerShell", "LSP", "Monitor", "CronCreate", "CronDelete", "CronList",
	"EnterWorktree", "ExitWorktree", "SendMessage", "ListAgents", "TaskCreate", "TaskGet", "TaskList",
	"TaskUpdate", "Workflow", "WaitForMcpServers", "PushNotification", "Artifact", "EndConversation",
}

// claudeRuleFamilies widen two names for permission rules, as Claude Code
// does: an Edit rule applies to every tool that edits files, a Read rule to
// every tool that reads them.
var claudeRuleFamilies = map[string][]string{
	"Edit": {"Edit", "MultiEdit", "Write"},
	"Read": {"Read", "Glob", "Grep", "LS"},
}

// ClaudeRuleTools returns the rein tools a permission rule naming the
// Claude Code tool name applies to, nil when name is not one. As in Claude
// Code, `Edit(config/**)` covers edit_file, multi_edit and write_file, and
// `Read(secrets/**)` covers read_file, glob, grep and list_dir.
func ClaudeRuleTools(name string) []string {
	names, ok := claudeRuleFamilies[name]
	if !ok {
		names = []string{name}
	}
	var out []string
	for _, n := range names {
		for _, t := range ClaudeToolNames[n] {
			if !contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
