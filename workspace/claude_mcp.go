package workspace

import (
	"fmt"
	"slices"
	"strings"
)

// MCPSkip is a server of the project's .mcp.json that Claude Code's
// settings leave out (SPEC COMPAT-1), and why.
type MCPSkip struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Reason string `json:"reason"`
	// Server is the server as declared.
	Server MCPServer `json:"server"`

	warning string
}

// Warning is the line [Loaded.Warnings] holds for the skip.
func (s MCPSkip) Warning() string { return s.warning }

// claudeMCPOrder is the precedence of Claude Code's settings levels for a
// single value, highest first.
var claudeMCPOrder = []ClaudeScope{ClaudeManaged, ClaudeLocal, ClaudeProject, ClaudeUser}

// gateClaudeMCP applies Claude Code's enableAllProjectMcpServers,
// enabledMcpjsonServers and disabledMcpjsonServers to the servers of the
// workspace's .mcp.json, as Claude Code does, on top of rein's own
// approval of them — the workspace's trust (PERM-5) — so the stricter
// wins: a server listed in disabledMcpjsonServers of any file is left out;
// when enableAllProjectMcpServers is true (the highest level that sets
// it decides) the others stay; otherwise, when any file has an
// enabledMcpjsonServers list or sets enableAllProjectMcpServers to false,
// only the servers listed stay; with none of these settings, trust alone
// decides. Settings never enable a server of an untrusted workspace. The
// servers left out are in l.MCPSkipped and the warnings.
func (l *Loaded) gateClaudeMCP(ls *layers) {
	if ls == nil || ls.workspace == nil {
		return
	}
	file := l.Workspace.ClaudeMCP()
	var enableAll *bool
	var enableAllFrom string
	for _, sc := range claudeMCPOrder {
		for _, f := range l.claudeFiles(sc) {
			if f.MCP.EnableAll != nil && enableAll == nil {
				enableAll, enableAllFrom = f.MCP.EnableAll, l.claudeName(f)
			}
		}
	}
	enabled := map[string]bool{}
	disabled := map[string]string{}
	var lists []string
	for _, f := range l.Claude {
		if f.MCP.Enabled != nil {
			lists = append(lists, l.claudeName(f))
			for _, n := range f.MCP.Enabled {
				enabled[n] = true
			}
		}
		for _, n := range f.MCP.Disabled {
			if _, seen := disabled[n]; !seen {
				disabled[n] = l.claudeName(f)
			}
		}
	}
	gated := len(lists) > 0 || (enableAll != nil && !*enableAll)
	kept := ls.workspace.mcp[:0:0]
	for _, s := range ls.workspace.mcp {
		if s.Path != file {
			kept = append(kept, s)
			continue
		}
		reason := ""
		switch {
		case disabled[s.Name] != "":
			reason = "disabledMcpjsonServers in " + disabled[s.Name] + " lists it"
		case enableAll != nil && *enableAll:
		case gated && !enabled[s.Name]:
			var why []string
			if len(lists) > 0 {
				why = append(why, "enabledMcpjsonServers in "+strings.Join(lists, ", ")+" does not list it")
			}
			if enableAll != nil {
				why = append(why, "enableAllProjectMcpServers is false in "+enableAllFrom)
			}
			reason = strings.Join(why, "; ")
		}
		if reason == "" {
			kept = append(kept, s)
			continue
		}
		skip := MCPSkip{Name: s.Name, Path: s.Path, Reason: reason, Server: s}
		skip.warning = fmt.Sprintf("MCP server %s of %s is not loaded: %s (Claude Code's settings)", s.Name, l.rel(s.Path), reason)
		l.MCPSkipped = append(l.MCPSkipped, skip)
		l.Warnings = append(l.Warnings, skip.warning)
	}
	ls.workspace.mcp = kept
	slices.SortStableFunc(l.MCPSkipped, func(a, b MCPSkip) int { return strings.Compare(a.Name, b.Name) })
}

// claudeName names a settings file in messages: relative to the
// workspace when it is the workspace's.
func (l *Loaded) claudeName(f ClaudeFile) string {
	if f.Scope.workspace() {
		return l.rel(f.Path)
	}
	return f.Path
}
