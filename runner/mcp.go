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
func (s *Setup) addMCPTools(set *tool.Set, m *mcptool.Manager) {
	var offered []tool.Tool
	for _, t := range m.Tools() {
		if allows(s.main, t.Spec().Name) {
			offered = append(offered, t)
		}
	}
	budget := s.mcpBudget()
	if budget.Fits(offered) {
		s.addEach(set, offered, false)
	} else {
		deferred := s.addEach(set, offered, true)
		search := mcptool.NewSearch(deferred, budget, set.Load)
		if err := set.Add(tool.OriginMCP, search.Tool()); err != nil {
			s.note("%s left out: %v; the MCP tools cannot be loaded", mcptool.SearchToolName, err)
		} else {
			s.note("MCP: %d tools exceed the budget of %s per request; the model loads them with %s",
				len(deferred), budget, mcptool.SearchToolName)
		}
	}
	for _, t := range m.ResourceTools() {
		if allows(s.main, t.Spec().Name) {
			s.addEach(set, []tool.Tool{t}, false)
		}
	}
}

// addEach adds tools one by one (deferred or not), so that one bad tool
// leaves out only itself; it returns those added.
func (s *Setup) addEach(set *tool.Set, tools []tool.Tool, deferred bool) []tool.Tool {
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
			s.note("MCP tool %s left out: %v", name, err)
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
func (s *Setup) mcpBudget() mcptool.Budget {
	return mcptool.Budget{MaxTools: s.ev.Int(workspace.MCPMaxTools), MaxBytes: s.ev.Int(workspace.MCPMaxToolBytes)}
}

// mcpReviews is where the user's acceptances of flagged servers are kept.
func (s *Setup) mcpReviews() *MCPReviews {
	return &MCPReviews{Dir: s.cfg.Loaded.Paths.ConfigDir}
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

// withheld warns about a withheld server, naming the tools and rules,
// records its screening for rein mcp list, and returns the warning ("" for
// a server not withheld).
func (s *Setup) withheld(reviews *MCPReviews, st mcptool.Status) string {
	if !st.Withheld {
		return ""
	}
	msg := fmt.Sprintf("MCP server %s is withheld: its definitions look like a prompt injection (%s); "+
		"none of its tools reach the model. Review them (rein mcp test %s), then accept them (rein mcp accept %s) or remove the server",
		st.Server, st.Screening.Explain(3), st.Server, st.Server)
	s.note("%s", msg)
	if err := reviews.RecordFlagged(st.Server, st.Screening, s.cfg.Now()); err != nil {
		s.logger.Warn("could not record a withheld MCP server", "server", st.Server, "err", err)
	}
	return msg
}
