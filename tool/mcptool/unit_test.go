package mcptool

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool"
)

var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 80)
	tests := []struct {
		server, tool, want string
	}{
		{"github", "get_issue", "mcp__github__get_issue"},
		{"my server", "get-sum", "mcp__my_server__get-sum"},
		{"fs", "read.file/v2", "mcp__fs__read_file_v2"},
		{"dé", "ツール", "mcp__d______"},
		{"s", long, "mcp__s__" + strings.Repeat("x", 47) + "_" + hashOf("s", long)},
	}
	for _, tt := range tests {
		got := ToolName(tt.server, tt.tool)
		if got != tt.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
		}
		if !validName.MatchString(got) {
			t.Errorf("ToolName(%q, %q) = %q: not a valid tool name", tt.server, tt.tool, got)
		}
	}
	a, b := ToolName("s", long+"a"), ToolName("s", long+"b")
	if a == b || len(a) != MaxNameLen || ToolName("s", long+"a") != a {
		t.Errorf("long names: %q and %q should differ, be %d long and be stable", a, b, MaxNameLen)
	}
}

func hashOf(server, tool string) string {
	h := hashed("", server, tool)
	return h[1:]
}

func TestBuildToolsCollisionsAndOrder(t *testing.T) {
	m := &Manager{opts: Options{}.withDefaults()}
	c := newConn(m, Server{Name: "s"})
	tools, offered := c.buildTools([]*mcp.Tool{
		{Name: "b", InputSchema: map[string]any{"type": "object"}},
		{Name: "a_b", InputSchema: map[string]any{"type": "object"}},
		{Name: "a.b", InputSchema: map[string]any{"type": "object"}},
	})
	var got []string
	for _, tl := range tools {
		got = append(got, tl.spec.Name)
	}
	want := []string{"mcp__s__a_b", "mcp__s__a_b_" + hashOf("s", "a_b"), "mcp__s__b"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if tools[0].remote != "a.b" || tools[1].remote != "a_b" {
		t.Errorf("remote names: %q, %q", tools[0].remote, tools[1].remote)
	}
	if len(offered) != 3 {
		t.Errorf("offered = %v", offered)
	}
	var all []tool.Tool
	for _, tl := range tools {
		all = append(all, tl)
	}
	if _, err := tool.NewSet(tool.OriginMCP, all...); err != nil {
		t.Errorf("the tools do not make a set: %v", err)
	}
}

func TestSchemaAndDescription(t *testing.T) {
	m := &Manager{opts: Options{}.withDefaults()}
	c := newConn(m, Server{Name: "s"})
	tools, _ := c.buildTools([]*mcp.Tool{
		{Name: "draft7", Description: "d", InputSchema: map[string]any{
			"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
			"properties": map[string]any{"q": map[string]any{"type": "string"}}}},
		{Name: "broken", Title: "Broken tool", InputSchema: map[string]any{"type": 12}},
		{Name: "nothing", InputSchema: nil},
		{Name: "long", Description: strings.Repeat("ü", 3000), InputSchema: map[string]any{"type": "object"}},
	})
	got := map[string]llm.ToolSpec{}
	for _, tl := range tools {
		got[tl.remote] = tl.spec
		if _, err := tool.CompileSchema(tl.spec.InputSchema); err != nil {
			t.Errorf("%s: schema does not compile: %v", tl.remote, err)
		}
	}
	if !strings.Contains(string(got["draft7"].InputSchema), `"q"`) {
		t.Errorf("draft-07 schema lost: %s", got["draft7"].InputSchema)
	}
	if s := string(got["broken"].InputSchema); s != `{"type":"object"}` || got["broken"].Description != "Broken tool" {
		t.Errorf("broken: %s, %q", s, got["broken"].Description)
	}
	if d := got["nothing"].Description; d != "Tool nothing of the MCP server s." {
		t.Errorf("nothing: description %q", d)
	}
	if d := got["long"].Description; len(d) > maxDescription || !strings.HasSuffix(d, "…") || !strings.HasPrefix(d, "üü") {
		t.Errorf("long description: %d bytes, %q…", len(d), d[:10])
	}
}

func TestMetaIgnoresAnnotations(t *testing.T) {
	m := &Manager{opts: Options{}.withDefaults()}
	c := newConn(m, Server{Name: "s"})
	yes := true
	tools, _ := c.buildTools([]*mcp.Tool{{Name: "ro", Annotations: &mcp.ToolAnnotations{
		ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool), DestructiveHint: &yes, Title: "RO"}}})
	tl := tools[0]
	if diff := cmp.Diff(tool.Meta{Category: tool.CategoryOther}, tl.Meta()); diff != "" {
		t.Errorf("Meta (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tool.MetaOf(tl), tl.Meta()); diff != "" {
		t.Errorf("MetaOf differs:\n%s", diff)
	}
	want := Annotations{Title: "RO", ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: true}
	if diff := cmp.Diff(want, tl.Annotations()); diff != "" {
		t.Errorf("Annotations (-want +got):\n%s", diff)
	}
	if got := annotationsOf(&mcp.Tool{}); got != (Annotations{DestructiveHint: true, OpenWorldHint: true}) {
		t.Errorf("default annotations = %+v", got)
	}
}

func TestConvert(t *testing.T) {
	png := []byte("\x89PNG fake")
	res := convert(&mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{
			&mcp.TextContent{Text: "hello"},
			&mcp.ImageContent{MIMEType: "image/png", Data: png},
			&mcp.ImageContent{MIMEType: "image/svg+xml", Data: []byte("<svg/>")},
			&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")},
			&mcp.ResourceLink{URI: "file:///a.txt", Name: "a", MIMEType: "text/plain"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://t", Text: "inside"}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://b", MIMEType: "application/zip", Blob: []byte("PK")}},
		},
	})
	want := []llm.Block{
		&llm.Text{Text: "hello"},
		&llm.Image{MediaType: "image/png", Data: png},
		&llm.Text{Text: "[image omitted: image/svg+xml, 6 bytes]"},
		&llm.Text{Text: "[audio omitted: audio/wav, 4 bytes]"},
		&llm.Text{Text: "[resource link] file:///a.txt — a (text/plain)"},
		&llm.Text{Text: "[resource mem://t]\ninside"},
		&llm.Text{Text: "[resource mem://b: binary, application/zip, 2 bytes]"},
	}
	if diff := cmp.Diff(want, res.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if !res.IsError {
		t.Error("isError lost")
	}

	structured := convert(&mcp.CallToolResult{StructuredContent: map[string]any{"t": 21}})
	if got := structured.TextOf(); got != `{"t":21}` {
		t.Errorf("structured only: %q", got)
	}
	both := convert(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "21 degrees"}},
		StructuredContent: map[string]any{"t": 21}})
	if got := both.TextOf(); got != "21 degrees" {
		t.Errorf("text and structured: %q", got)
	}
	if got := convert(&mcp.CallToolResult{}).TextOf(); got != "(the tool returned no content)" {
		t.Errorf("empty: %q", got)
	}
}

func TestCapText(t *testing.T) {
	img := &llm.Image{MediaType: "image/png", Data: []byte("x")}
	blocks := []llm.Block{&llm.Text{Text: "abcdé"}, img, &llm.Text{Text: "fgh"}, &llm.Text{Text: "ijk"}}
	got := capText(blocks, 5)
	want := []llm.Block{&llm.Text{Text: "abcd"}, img, &llm.Text{Text: "\n[output truncated: 4 of 12 bytes shown]"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("capText (-want +got):\n%s", diff)
	}
	if got := capText(blocks, 100); len(got) != len(blocks) {
		t.Errorf("under the cap, blocks changed: %v", got)
	}
}

func TestTail(t *testing.T) {
	tl := &tail{max: 8}
	_, _ = tl.Write([]byte("hello "))
	_, _ = tl.Write([]byte("wörld\n"))
	if got := tl.String(); got != "…wörld" {
		t.Errorf("tail = %q", got)
	}
}

func TestBackoff(t *testing.T) {
	m := &Manager{opts: Options{MinBackoff: 100, MaxBackoff: 1000}.withDefaults()}
	c := newConn(m, Server{Name: "s"})
	for n, want := range map[int]int64{1: 100, 2: 200, 3: 400, 4: 800, 5: 1000, 40: 1000} {
		got := int64(c.backoff(n))
		if got > want || got < want-want/10 {
			t.Errorf("backoff(%d) = %d, want %d less up to a tenth", n, got, want)
		}
	}
}

func TestEnvOf(t *testing.T) {
	t.Setenv("PATH", "/p")
	t.Setenv("HOME", "/h")
	t.Setenv("REIN_SECRET", "s")
	if diff := cmp.Diff([]string{"PATH=/p", "HOME=/h"}, envOf(nil)); diff != "" {
		t.Errorf("nil env (-want +got):\n%s", diff)
	}
	if got := envOf([]string{}); got == nil || len(got) != 0 {
		t.Errorf("an empty env must stay empty, got %v", got)
	}
}
