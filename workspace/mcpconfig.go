package workspace

import (
	"fmt"
	"strings"
)

// MCPConfigError is a problem of an MCP document given for the invocation
// ([Options.MCPConfigs]): the caller's input, which a front reports as a
// usage error.
type MCPConfigError struct {
	// Source names the document (a file, or the flag).
	Source string
	// Problems say what is wrong, each with its line.
	Problems []string
}

func (e *MCPConfigError) Error() string {
	return fmt.Sprintf("MCP servers of %s: %s", e.Source, strings.Join(e.Problems, "; "))
}

// addMCPConfigs adds the servers of the invocation's MCP documents
// (Claude Code's --mcp-config; SPEC COMPAT-1, MCP-1) as the run layer of
// defs, the user's own; with opts.StrictMCP every other server is left
// out. A document that does not parse, or a server in it that cannot be
// used (an unset variable, a bad name), fails: the user typed it for this
// run, and a run without it would not be the run they asked for.
func addMCPConfigs(defs *layers, opts Options, getenv func(string) string) error {
	if opts.StrictMCP {
		defs.user.mcp = nil
		if defs.workspace != nil {
			defs.workspace.mcp = nil
		}
	}
	if len(opts.MCPConfigs) == 0 {
		return nil
	}
	run := &layer{}
	for _, c := range opts.MCPConfigs {
		servers, probs := parseMCPJSON(c.Source, c.Data, envReader{getenv: getenv})
		if len(probs) > 0 {
			e := &MCPConfigError{Source: c.Source}
			for _, p := range probs {
				e.Problems = append(e.Problems, p.String())
			}
			return e
		}
		for i := range servers {
			servers[i].Origin = OriginUser
		}
		run.mcp = append(run.mcp, servers...)
	}
	defs.run = run
	return nil
}
