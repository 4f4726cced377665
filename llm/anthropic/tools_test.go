package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
)

// referenceTools is the "tools" member as json.Marshal writes the
// toolParam list, the last with its breakpoint: what appendTools must
// write byte for byte (SPEC PROV-6: the bytes are pinned).
func referenceTools(tools []llm.ToolSpec) ([]byte, error) {
	var list []*toolParam
	for i, t := range tools {
		p, err := toTool(t)
		if err != nil {
			return nil, err
		}
		if i == len(tools)-1 {
			p.CacheControl = ephemeral()
		}
		list = append(list, p)
	}
	b, err := json.Marshal(struct {
		Tools []*toolParam `json:"tools"`
	}{list})
	if err != nil {
		return nil, err
	}
	return append([]byte{','}, b[1:len(b)-1]...), nil
}

// A cached declaration is only ever the declaration it was made from: the
// same schema under other names or descriptions, an empty schema, escapes,
// and an invalid schema (refused, never cached) (PROV-6).
func TestToolJSONAsMarshal_PROV6(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	cases := [][]llm.ToolSpec{
		{{Name: "read", Description: "Read a file.", InputSchema: schema}},
		{{Name: "read", Description: "Read a file.", InputSchema: schema}, {Name: "list", Description: "Read a file.", InputSchema: schema}},
		{{Name: "read", Description: "Read <a> & file.", InputSchema: schema}, {Name: "read", InputSchema: schema}},
		{{Name: "empty"}, {Name: "spaced", InputSchema: json.RawMessage(" {\n \"type\" : \"object\" }\n")}},
		{{Name: "html", Description: "x", InputSchema: json.RawMessage(`{"description":"<b>&amp;</b>","type":"object"}`)}},
	}
	for round := range 2 { // the second round is served from the cache
		for i, tools := range cases {
			got, err := appendTools(nil, tools, "")
			if err != nil {
				t.Fatalf("round %d case %d: %v", round, i, err)
			}
			want, _ := referenceTools(tools)
			if !bytes.Equal(got, want) {
				t.Errorf("round %d case %d:\n got %s\nwant %s", round, i, got, want)
			}
		}
	}
	bad := []llm.ToolSpec{{Name: "bad", InputSchema: json.RawMessage(`{"type":`)}}
	for range 2 {
		if _, err := appendTools(nil, bad, ""); err == nil || !strings.Contains(err.Error(), `tool "bad": input schema is not valid JSON`) {
			t.Errorf("invalid schema: %v", err)
		}
	}
}

// Ever new declarations (a hostile MCP server's) cannot grow the cache
// past its bound, and past it declarations are still encoded right.
func TestToolJSONBounded_PROV6(t *testing.T) {
	c := &toolCache{bySchema: map[string][]cachedTool{}}
	pad := strings.Repeat("x", 64<<10)
	for i := range 200 {
		s := llm.ToolSpec{Name: "t", InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","description":"%d%s"}`, i, pad))}
		got, err := c.encode(s)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(&toolParam{InputSchema: s.InputSchema, Name: s.Name})
		if !bytes.Equal(got, want) {
			t.Fatalf("declaration %d encoded wrong", i)
		}
	}
	if c.bytes > maxToolJSONBytes {
		t.Errorf("cache holds %d bytes, bound %d", c.bytes, maxToolJSONBytes)
	}
	if n := len(c.bySchema); n == 0 || n >= 200 {
		t.Errorf("cache holds %d schemas of 200 of 192 KiB each; want some, not all", n)
	}
}

// FuzzToolJSON: for any declarations, appendTools writes what json.Marshal
// writes, or refuses what toTool refuses, the first time and the second.
func FuzzToolJSON(f *testing.F) {
	f.Add("read", "Read a file.", `{"type":"object"}`, "list", `{"type":"object","properties":{}}`)
	f.Add("a", "<&>", ``, "b", `[1, 2]`)
	f.Add("a", "\u2028", `{"x":"\u00e9"}`, "a", `{`)
	f.Fuzz(func(t *testing.T, name1, desc, schema1, name2, schema2 string) {
		tools := []llm.ToolSpec{
			{Name: name1, Description: desc, InputSchema: json.RawMessage(schema1)},
			{Name: name2, Description: desc, InputSchema: json.RawMessage(schema2)},
		}
		want, werr := referenceTools(tools)
		for range 2 {
			got, err := appendTools(nil, tools, "")
			if (err != nil) != (werr != nil) || !bytes.Equal(got, want) {
				t.Fatalf("appendTools = %s, %v; want %s, %v", got, err, want, werr)
			}
		}
	})
}

// BenchmarkEncodeBody encodes a turn's request: 18 tools of the size
// rein offers (~9 KB of declarations) and a short history (PROV-6, issue 30).
func BenchmarkEncodeBody(b *testing.B) {
	var tools []llm.ToolSpec
	for i := range 18 {
		schema := fmt.Sprintf(`{"type":"object","properties":{"path":{"type":"string","description":"The file or directory %d, relative to the workspace."},"limit":{"type":"integer","minimum":1},"mode":{"type":"string","enum":["a","b","c"]}},"required":["path"],"additionalProperties":false}`, i)
		tools = append(tools, llm.ToolSpec{Name: fmt.Sprintf("tool_%d", i), Description: strings.Repeat("Does one thing well, and says so. ", 8), InputSchema: json.RawMessage(schema)})
	}
	req := &llm.Request{Model: "claude-sonnet-4-5", System: strings.Repeat("You are rein. ", 200), Tools: tools,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.Text{Text: "Run echo hi."}}}}}
	b.ReportAllocs()
	for b.Loop() {
		p, err := buildRequest(req, req.Messages)
		if err == nil {
			_, err = encodeBody(p)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
