package acp

import (
	"context"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/tool"
)

// A tool rein does not name (an MCP tool, an action) gets the kind of its
// permission category in its tool_call (FRONT-1); rein's own keep theirs,
// and a tool not in the set is "other".
func TestToolKindByCategory_FRONT1(t *testing.T) {
	type in struct{}
	noop := func(context.Context, tool.Call, in) (tool.Result, error) { return tool.Text("ok"), nil }
	set, err := tool.NewSet(tool.OriginMCP,
		tool.Define("mcp__ci__deploy", "Deploys.", tool.Meta{Category: tool.CategoryExecute}, nil, noop),
		tool.Define("mcp__docs__fetch", "Fetches.", tool.Meta{Category: tool.CategoryNetwork}, nil, noop),
		tool.Define("mcp__fs__peek", "Reads.", tool.Meta{Category: tool.CategoryRead, ReadOnly: true}, nil, noop))
	if err != nil {
		t.Fatal(err)
	}
	tr := newTranslator("/work")
	tr.tools = set
	for name, want := range map[string]sdk.ToolKind{
		"mcp__ci__deploy": sdk.ToolKindExecute, "mcp__docs__fetch": sdk.ToolKindFetch, "mcp__fs__peek": sdk.ToolKindRead,
		"read_file": sdk.ToolKindRead, "bash": sdk.ToolKindExecute, "mcp__gone__x": sdk.ToolKindOther,
	} {
		if got := tr.toolStart("c", name, []byte(`{}`)).ToolCall.Kind; got != want {
			t.Errorf("%s: kind %s, want %s", name, got, want)
		}
	}
}
