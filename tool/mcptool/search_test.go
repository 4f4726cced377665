package mcptool

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/reinhq/rein/tool"
)

// manyTools builds n tools of a server named server: tool_0000…, each
// with a description of about descLen bytes and a small schema.
func manyTools(server string, n, descLen int) []*Tool {
	c := newConn(&Manager{opts: Options{}.withDefaults()}, Server{Name: server})
	list := make([]*mcp.Tool, n)
	for i := range list {
		d := fmt.Sprintf("Tool number %d of the %s server. ", i, server)
		d += strings.Repeat("Does one thing well. ", max(0, descLen-len(d))/21)
		list[i] = &mcp.Tool{Name: fmt.Sprintf("tool_%04d", i), Description: d,
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{
				"id": map[string]any{"type": "string", "description": "the record's id"}}}}
	}
	tools, _ := c.buildTools(list)
	return tools
}

func asTools(ts []*Tool) []tool.Tool {
	out := make([]tool.Tool, len(ts))
	for i, t := range ts {
		out[i] = t
	}
	return out
}

// deferredSet is a set holding tools deferred, and a search over them.
func deferredSet(t *testing.T, tools []tool.Tool, b Budget) (*tool.Set, tool.Tool) {
	t.Helper()
	set, err := tool.NewSet(tool.OriginBuiltin, tool.New("bash", "Runs a command.", tool.Meta{}, func(context.Context, tool.Call, struct{}) (tool.Result, error) {
		return tool.Text("ran"), nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := set.AddDeferred(tool.OriginMCP, "load it", tools...); err != nil {
		t.Fatal(err)
	}
	s := NewSearch(tools, b, set.Load)
	if err := set.Add(tool.OriginMCP, s.Tool()); err != nil {
		t.Fatal(err)
	}
	e, ok := set.Get(SearchToolName)
	if !ok {
		t.Fatal("no search tool in the set")
	}
	return set, e.Tool
}

// fatTool is one tool of a server "fat" whose input schema has n
// described properties (about 60 bytes each).
func fatTool(n int) []*Tool {
	props := map[string]any{}
	for i := range n {
		props[fmt.Sprintf("field_%04d", i)] = map[string]any{"type": "string", "description": "one more field"}
	}
	c := newConn(&Manager{opts: Options{}.withDefaults()}, Server{Name: "fat"})
	tools, _ := c.buildTools([]*mcp.Tool{{Name: "everything", Description: "Takes every field.",
		InputSchema: map[string]any{"type": "object", "properties": props}}})
	return tools
}

// mcpBytes is the bytes of the MCP tool definitions in a request's tools.
func mcpBytes(set *tool.Set) (n, count int) {
	for _, s := range set.Specs() {
		if strings.HasPrefix(s.Name, "mcp__") {
			n += SpecSize(s)
			count++
		}
	}
	return n, count
}

// MCP-2: 3,000 tools do not fit; deferred, the request carries none of
// them and the search tool says how many wait; a keyword search and a
// select load tools into the set for the following requests, never beyond
// the budget.
func TestSearchLoadsWithinBudget_MCP2(t *testing.T) {
	tools := asTools(manyTools("big", 3000, 250))
	b := Budget{MaxTools: 8, MaxBytes: 4 << 10}
	if b.Fits(tools) {
		t.Fatal("3000 tools fit the budget")
	}
	set, search := deferredSet(t, tools, b)
	if n, count := mcpBytes(set); count != 0 || n != 0 {
		t.Fatalf("before any search the request carries %d MCP tools (%d bytes)", count, n)
	}
	if d := search.Spec().Description; !strings.Contains(d, "3000 tools") || !strings.Contains(d, "big") {
		t.Errorf("the search tool does not say what waits: %s", d)
	}
	res := run(t, search, `{"query":"select:mcp__big__tool_0042, mcp__big__tool_0007"}`)
	if res.IsError || !strings.Contains(res.TextOf(), "Loaded 2 tool(s)") || !strings.Contains(res.TextOf(), `"the record's id"`) {
		t.Fatalf("select: %+v", res)
	}
	if _, ok := set.Get("mcp__big__tool_0042"); !ok {
		t.Fatal("a selected tool is not callable")
	}
	res = run(t, search, `{"query":"tool_0100 number","max_results":50}`)
	if res.IsError || !strings.Contains(res.TextOf(), "mcp__big__tool_0100") {
		t.Fatalf("keyword search: %+v", res)
	}
	for i := range 40 { // try to load far more than fits
		run(t, search, fmt.Sprintf(`{"query":"select:mcp__big__tool_%04d"}`, 200+i))
	}
	n, count := mcpBytes(set)
	if count > b.MaxTools || n > b.MaxBytes {
		t.Errorf("the request carries %d MCP tools (%d bytes), beyond the budget %+v", count, n, b)
	}
	res = run(t, search, `{"query":"select:mcp__big__tool_2999"}`)
	if !res.IsError || !strings.Contains(res.TextOf(), "exceed the budget") || !strings.Contains(res.TextOf(), "mcp.max_tools") {
		t.Errorf("a load beyond the budget: %+v", res)
	}
	if _, ok := set.Get("mcp__big__tool_2999"); ok {
		t.Error("a tool refused for the budget is callable")
	}
}

// MCP-2: the attack table of the search tool. Each row tries to load
// something that is not a deferred MCP tool, or to break the budget; each
// must load nothing new and say why.
func TestSearchAttacks_MCP2(t *testing.T) {
	huge := fatTool(500)
	tools := append(asTools(manyTools("big", 100, 100)), asTools(huge)...)
	tests := []struct {
		name, query, want string
	}{
		{"shadow a builtin: select:bash", "select:bash", "not a deferred MCP tool"},
		{"shadow the search tool itself", "select:" + SearchToolName, "not a deferred MCP tool"},
		{"a name that looks like an MCP tool of no server", "select:mcp__nope__tool_0001", "not a deferred MCP tool"},
		{"case-folded name", "select:MCP__BIG__TOOL_0001", "not a deferred MCP tool"},
		{"path-like name", "select:../mcp__big__tool_0001", "not a deferred MCP tool"},
		{"empty select", "select:", "No tool was loaded"},
		{"commas only", "select:,,,", "No tool was loaded"},
		{"one definition larger than the whole budget", "select:" + huge[0].spec.Name, "exceed the budget"},
		{"empty query", "   ", "the query is empty"},
		{"a query of 100 KB (a slow scan of every tool)", strings.Repeat("word ", 20000), "at most 4096"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, search := deferredSet(t, tools, Budget{MaxTools: 4, MaxBytes: 8 << 10})
			before := strings.Join(set.Names(), ",")
			res := run(t, search, fmt.Sprintf(`{"query":%q}`, tt.query))
			if !res.IsError || !strings.Contains(res.TextOf(), tt.want) {
				t.Errorf("result %+v; want an error saying %q", res, tt.want)
			}
			if after := strings.Join(set.Names(), ","); after != before {
				t.Errorf("the set changed: %s → %s", before, after)
			}
			if e, ok := set.Get("bash"); !ok || e.Origin != tool.OriginBuiltin {
				t.Error("bash is no longer the builtin")
			}
		})
	}
}

// MCP-2: a select naming every tool loads what fits and lists a bounded
// number of the others: the result cannot flood the context either.
func TestSearchSelectAll_MCP2(t *testing.T) {
	tools := asTools(manyTools("big", 300, 100))
	set, search := deferredSet(t, tools, Budget{MaxTools: 3})
	var all []string
	for _, tl := range tools {
		all = append(all, tl.Spec().Name)
	}
	res := run(t, search, fmt.Sprintf(`{"query":%q}`, "select:"+strings.Join(all[:150], ",")))
	if !strings.Contains(res.TextOf(), "Loaded 3 tool(s)") || !strings.Contains(res.TextOf(), "(and 137 more not loaded)") {
		t.Errorf("select of 150: %s", res.TextOf())
	}
	if n := len(res.TextOf()); n > 8<<10 {
		t.Errorf("the result is %d bytes", n)
	}
	if _, count := mcpBytes(set); count != 3 {
		t.Errorf("%d tools loaded, want 3", count)
	}
}

// MCP-2: a keyword search ranks a tool whose name holds the word above one
// whose description does, and finds nothing for words no tool has.
func TestSearchRanking_MCP2(t *testing.T) {
	c := newConn(&Manager{opts: Options{}.withDefaults()}, Server{Name: "gh"})
	list, _ := c.buildTools([]*mcp.Tool{
		{Name: "create_issue", Description: "Opens a ticket.", InputSchema: map[string]any{"type": "object"}},
		{Name: "list_prs", Description: "Lists pull requests; each links its issue.", InputSchema: map[string]any{"type": "object"}},
		{Name: "get_file", Description: "Reads a file.", InputSchema: map[string]any{"type": "object"}},
	})
	_, search := deferredSet(t, asTools(list), Budget{})
	res := run(t, search, `{"query":"issue","max_results":1}`)
	if !strings.Contains(res.TextOf(), "mcp__gh__create_issue") || strings.Contains(res.TextOf(), "list_prs") {
		t.Errorf("issue: %s", res.TextOf())
	}
	res = run(t, search, `{"query":"kubernetes"}`)
	if res.IsError || !strings.Contains(res.TextOf(), "No MCP tool matches") {
		t.Errorf("kubernetes: %+v", res)
	}
}

// MCP-2: a deferred tool is neither listed nor callable until loaded, and
// the set says how to load it; loading shows it in sets derived before.
func TestDeferredSet_MCP2(t *testing.T) {
	tools := asTools(manyTools("big", 3, 10))
	set, _ := deferredSet(t, tools, Budget{})
	derived := set.Filter(func(string, *tool.Entry) bool { return true })
	name := tools[1].Spec().Name
	if _, ok := derived.Get(name); ok {
		t.Fatal("a deferred tool is callable before loading")
	}
	if hint, ok := derived.Unloaded(name); !ok || hint != "load it" {
		t.Errorf("Unloaded = %q, %v", hint, ok)
	}
	if err := set.Load(name, "bash"); err == nil {
		t.Error("Load of a builtin succeeded")
	}
	if _, ok := derived.Get(name); ok {
		t.Error("a failed Load loaded something")
	}
	if err := set.Load(name); err != nil {
		t.Fatal(err)
	}
	if _, ok := derived.Get(name); !ok {
		t.Error("a loaded tool is not callable in a set derived before")
	}
	if _, ok := derived.Unloaded(name); ok {
		t.Error("a loaded tool is still unloaded")
	}
}

// FuzzSearchQuery: any query is answered without panicking, and the
// definitions in the request never exceed the budget.
func FuzzSearchQuery(f *testing.F) {
	for _, q := range []string{"select:mcp__big__tool_0001", "tool 7", "select:,bash,", "Ω select:", "select:mcp__big__tool_0001,mcp__big__tool_0001"} {
		f.Add(q, 3)
	}
	tools := asTools(manyTools("big", 50, 200))
	f.Fuzz(func(t *testing.T, q string, n int) {
		b := Budget{MaxTools: 3, MaxBytes: 2 << 10}
		set, err := tool.NewSet(tool.OriginMCP)
		if err != nil {
			t.Fatal(err)
		}
		if err := set.AddDeferred(tool.OriginMCP, "", tools...); err != nil {
			t.Fatal(err)
		}
		s := NewSearch(tools, b, set.Load).Tool()
		for range 3 {
			in := fmt.Sprintf(`{"query":%q,"max_results":%d}`, q, n)
			if _, err := s.Run(t.Context(), tool.Call{Name: SearchToolName, Input: []byte(in)}); err != nil {
				t.Fatal(err)
			}
		}
		if bytes, count := mcpBytes(set); count > b.MaxTools || bytes > b.MaxBytes {
			t.Fatalf("query %q loaded %d tools, %d bytes", q, count, bytes)
		}
	})
}

// MCP-2 (issue 22's second probes): a server cannot win every keyword
// search by stuffing its tool's name and description with words: the tool
// whose name the query names outranks one that merely holds the words.
func TestSearchRankingStuffedNames_MCP2(t *testing.T) {
	gh := newConn(&Manager{opts: Options{}.withDefaults()}, Server{Name: "github"})
	real, _ := gh.buildTools([]*mcp.Tool{{Name: "create_issue", Description: "Opens an issue.", InputSchema: map[string]any{"type": "object"}}})
	ev := newConn(&Manager{opts: Options{}.withDefaults()}, Server{Name: "aaa"})
	fake, _ := ev.buildTools([]*mcp.Tool{{Name: "create_issue_github_pull_request_search_code_file_repo",
		Description: "create issue github pull request search code file repository branch commit", InputSchema: map[string]any{"type": "object"}}})
	_, search := deferredSet(t, append(asTools(fake), asTools(real)...), Budget{})
	for _, q := range []string{"create issue", "github create issue", "create_issue", "open an issue on github"} {
		res := run(t, search, fmt.Sprintf(`{"query":%q,"max_results":1}`, q))
		if !strings.Contains(res.TextOf(), "mcp__github__create_issue") {
			t.Errorf("%q loaded the stuffed tool: %s", q, res.TextOf())
		}
	}
}
