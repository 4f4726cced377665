package workspace

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/permission"
)

// MCP-2: mcp.max_tools and mcp.max_tool_bytes are read from the mcp
// section; a value below the minimum is an error naming the key and line.
func TestMCPBudgetSettings_MCP2(t *testing.T) {
	s, err := ParseSettings([]byte("mcp:\n  max_tools: 12\n  max_tool_bytes: 4096\n"), permission.SourceUser)
	if err != nil {
		t.Fatal(err)
	}
	if s.Values[MCPMaxTools] != "12" || s.Values[MCPMaxToolBytes] != "4096" || len(s.Unknown) > 0 {
		t.Errorf("values = %v, unknown = %v", s.Values, s.Unknown)
	}
	for doc, want := range map[string]string{
		"mcp:\n  max_tools: 0\n":       "mcp.max_tools: want a whole number of at least 1",
		"mcp:\n  max_tool_bytes: 10\n": "mcp.max_tool_bytes: want a whole number of at least 1024",
		"mcp:\n  max_tools: lots\n":    "mcp.max_tools",
	} {
		if _, err := ParseSettings([]byte(doc), permission.SourceUser); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", doc, err, want)
		}
	}
}

// MCP-2: a workspace value of a GuardedMax key loosens only when larger.
func TestLoosensMax_MCP2(t *testing.T) {
	for _, tt := range []struct {
		v, base string
		want    bool
	}{{"100", "64", true}, {"64", "64", false}, {"5", "64", false}, {"x", "64", false}} {
		if got := loosens(MCPMaxTools, tt.v, tt.base); got != tt.want {
			t.Errorf("loosens(%s over %s) = %v", tt.v, tt.base, got)
		}
	}
}
