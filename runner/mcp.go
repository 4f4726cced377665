package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/memory"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/mcptool"
	"github.com/reinhq/rein/workspace"
)

// This file bounds and screens what the MCP servers put in front of the
// model (SPEC MCP-2): the tool definitions of each request stay within the
// budget (settings mcp.max_tools, mcp.max_tool_bytes), deferred behind
// mcp_tool_search above it; a server whose definitions the document rules
// flag is withheld until the user accepts it (rein mcp accept).

// addMCPTools adds the MCP tools the agent may call: all of them when they
// fit the budget, else none up front and the search tool that loads them,
// within the same budget, for the rest of the session. The resource tools
// are rein's own and always added.
func (e *Engine) addMCPTools(set *tool.Set, m *mcptool.Manager) {
	var offered []tool.Tool
	for _, t := range m.Tools() {
		if allows(e.main, t.Spec().Name) {
			offered = append(offered, t)
		}
	}
	budget := e.mcpBudget()
	if budget.Fits(offered) {
		e.addEach(set, offered, false)
	} else {
		deferred := e.addEach(set, offered, true)
		search := mcptool.NewSearch(deferred, budget, set.Load)
		if err := set.Add(tool.OriginMCP, search.Tool()); err != nil {
			e.note("%s left out: %v; the MCP tools cannot be loaded", mcptool.SearchToolName, err)
		} else {
			e.note("MCP: %d tools exceed the budget of %s per request; the model loads them with %s",
				len(deferred), budget, mcptool.SearchToolName)
		}
	}
	for _, t := range m.ResourceTools() {
		if allows(e.main, t.Spec().Name) {
			e.addEach(set, []tool.Tool{t}, false)
		}
	}
}

// addEach adds tools one by one (deferred or not), so that one bad tool
// leaves out only itself; it returns those added.
func (e *Engine) addEach(set *tool.Set, tools []tool.Tool, deferred bool) []tool.Tool {
	added := make([]tool.Tool, 0, len(tools))
	for _, t := range tools {
		name := t.Spec().Name
		var err error
		if deferred {
			err = set.AddDeferred(tool.OriginMCP, mcptool.Hint(name), t)
		} else {
			err = set.Add(tool.OriginMCP, t)
		}
		if err != nil {
			e.note("MCP tool %s left out: %v", name, err)
			continue
		}
		added = append(added, t)
	}
	return added
}

// searchFor reports whether name is the MCP search tool and an agent
// whose tools name some MCP tools (mcp__github__*) needs it to load them
// when they are deferred.
func searchFor(def *workspace.Agent, name string) bool {
	if name != mcptool.SearchToolName || def.Tools == nil || matchAny(toolPatterns(def.DisallowedTools), name) {
		return false
	}
	return slices.ContainsFunc(toolPatterns(def.Tools), func(p string) bool { return strings.HasPrefix(p, "mcp__") })
}

// mcpBudget is the budget of MCP tool definitions per request.
func (e *Engine) mcpBudget() mcptool.Budget {
	return mcptool.Budget{MaxTools: e.ev.Int(workspace.MCPMaxTools), MaxBytes: e.ev.Int(workspace.MCPMaxToolBytes)}
}

// mcpReviews is where the user's acceptances of flagged servers are kept.
func (e *Engine) mcpReviews() *MCPReviews {
	return &MCPReviews{Dir: e.cfg.Loaded.Paths.ConfigDir}
}

// ScreenText is mcptool.Options.Screen: the memory scanner's document
// rules (SPEC MEM-3), the same AGENTS.md and skills go through
// (ScanInstructions), applied to what an MCP server puts in front of the
// model. It returns the findings in words, "" for none.
func ScreenText(text string) string {
	if fs := memory.ScanDocument(text); len(fs) > 0 {
		return memory.Explain(fs)
	}
	return ""
}

// warnWithheld warns about a withheld server, naming the tools and rules,
// and records its screening for rein mcp list.
func (e *Engine) warnWithheld(reviews *MCPReviews, st mcptool.Status) {
	if !st.Withheld {
		return
	}
	msg := fmt.Sprintf("MCP server %s is withheld: its definitions look like a prompt injection (%s); "+
		"none of its tools reach the model. Review them (rein mcp test %s), then accept them (rein mcp accept %s) or remove the server",
		st.Server, st.Screening.Explain(3), st.Server, st.Server)
	e.warnings = append(e.warnings, msg)
	e.note("%s", msg)
	if err := reviews.RecordFlagged(st.Server, st.Screening, e.cfg.Now()); err != nil {
		e.logger.Warn("could not record a withheld MCP server", "server", st.Server, "err", err)
	}
}
