package mcptool

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool"
)

const (
	// MaxOutput caps the text of one result, in bytes; longer text is cut
	// with a note saying so.
	MaxOutput = 100 << 10
	// maxImage is the largest image passed on to the model, in bytes
	// (the vendors' limit); a larger one becomes a note.
	maxImage = 5 << 20
	// maxDescription caps a tool's description, in bytes.
	maxDescription = 2048
)

// Tool is one tool of an MCP server, as rein offers it to the model.
type Tool struct {
	conn   *conn
	remote string
	spec   llm.ToolSpec
	ann    Annotations
}

// Annotations are what a server says of one of its tools (MCP
// ToolAnnotations), with the protocol's defaults where it says nothing.
// They are hints from a third party: a front end may show them, but they
// never change the tool's [tool.Meta] — pre-approve a server's read-only
// tools with permission rules instead.
type Annotations struct {
	Title string
	// ReadOnlyHint: the tool changes nothing (default false).
	ReadOnlyHint bool
	// DestructiveHint: an update may destroy data (default true; meaningful
	// only when ReadOnlyHint is false).
	DestructiveHint bool
	// IdempotentHint: calling again with the same input has no further
	// effect (default false).
	IdempotentHint bool
	// OpenWorldHint: the tool reaches entities outside the server, like the
	// web (default true).
	OpenWorldHint bool
}

// Spec describes the tool: its rein name, the server's description and
// input schema.
func (t *Tool) Spec() llm.ToolSpec { return t.spec }

// Meta is the conservative default whatever the server's annotations say:
// not read-only, not concurrency-safe, category other.
func (t *Tool) Meta() tool.Meta { return tool.Meta{Category: tool.CategoryOther} }

// Annotations returns what the server says of the tool. See [Annotations].
func (t *Tool) Annotations() Annotations { return t.ann }

// Server returns the name of the tool's server.
func (t *Tool) Server() string { return t.conn.cfg.Name }

// RemoteName returns the tool's name on its server.
func (t *Tool) RemoteName() string { return t.remote }

// Run calls the tool on its server (tools/call) within the server's call
// timeout. A withheld server's tool is not called (SPEC MCP-2). Every failure — the server's own (isError), a timeout, a lost
// connection, a tool the server no longer offers — is an error result; the
// error is always nil.
func (t *Tool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	meta := map[string]any{"mcp_server": t.conn.cfg.Name, "mcp_tool": t.remote}
	if t.conn.withheld() {
		r := tool.Errorf("%s", t.conn.withheldMessage())
		r.Metadata = meta
		return r, nil
	}
	if !t.conn.offers(t.remote) {
		r := tool.Errorf("mcp server %q no longer offers the tool %q", t.conn.cfg.Name, t.remote)
		r.Metadata = meta
		return r, nil
	}
	args := json.RawMessage(call.Input)
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var res *mcp.CallToolResult
	err := t.conn.with(ctx, "tool "+t.remote, func(ctx context.Context, l *live) error {
		var err error
		res, err = l.cs.CallTool(ctx, &mcp.CallToolParams{Name: t.remote, Arguments: args})
		return err
	})
	if err != nil {
		r := tool.Errorf("%v", err)
		r.Metadata = meta
		return r, nil
	}
	r := convert(res)
	r.Metadata = meta
	return r, nil
}

// buildTools turns a server's list into tools, sorted by name; offered
// holds the server's names of them.
func (c *conn) buildTools(list []*mcp.Tool) (tools []*Tool, offered map[string]bool) {
	list = slices.Clone(list)
	slices.SortFunc(list, func(a, b *mcp.Tool) int { return cmp.Compare(a.Name, b.Name) })
	offered = make(map[string]bool, len(list))
	used := map[string]bool{}
	for _, mt := range list {
		if mt == nil || mt.Name == "" || offered[mt.Name] {
			continue
		}
		name := ToolName(c.cfg.Name, mt.Name)
		if used[name] { // "a.b" and "a_b" both sanitise to "a_b"
			name = hashed(name, c.cfg.Name, mt.Name)
		}
		used[name], offered[mt.Name] = true, true
		tools = append(tools, &Tool{
			conn:   c,
			remote: mt.Name,
			spec:   llm.ToolSpec{Name: name, Description: description(c.cfg.Name, mt), InputSchema: c.schemaOf(mt)},
			ann:    annotationsOf(mt),
		})
	}
	slices.SortFunc(tools, func(a, b *Tool) int { return cmp.Compare(a.spec.Name, b.spec.Name) })
	return tools, offered
}

// description is the tool's description for the model, capped.
func description(server string, mt *mcp.Tool) string {
	d := strings.TrimSpace(cmp.Or(mt.Description, mt.Title))
	if mt.Annotations != nil && d == "" {
		d = mt.Annotations.Title
	}
	if d == "" {
		return fmt.Sprintf("Tool %s of the MCP server %s.", mt.Name, server)
	}
	if len(d) > maxDescription {
		d = cutUTF8(d, maxDescription-len("…")) + "…"
	}
	return d
}

// schemaOf returns the tool's input schema as JSON. A schema rein cannot
// compile loses its "$schema" key, then, failing that, becomes a plain
// object schema (with a warning in the log): one odd tool must not keep a
// server's others out of the tool set.
func (c *conn) schemaOf(mt *mcp.Tool) json.RawMessage {
	const anyObject = `{"type":"object"}`
	raw, err := json.Marshal(mt.InputSchema)
	if err != nil || bytes.Equal(raw, []byte("null")) {
		return json.RawMessage(anyObject)
	}
	if _, err := tool.CompileSchema(raw); err == nil {
		return raw
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) == nil {
		delete(m, "$schema")
		if b, err := json.Marshal(m); err == nil {
			if _, err := tool.CompileSchema(b); err == nil {
				return b
			}
		}
	}
	_, err = tool.CompileSchema(raw)
	c.log.Warn("mcp tool: input schema does not compile; the tool takes any object", "tool", mt.Name, "err", err)
	return json.RawMessage(anyObject)
}

func annotationsOf(mt *mcp.Tool) Annotations {
	a := Annotations{DestructiveHint: true, OpenWorldHint: true}
	if x := mt.Annotations; x != nil {
		a.Title = x.Title
		a.ReadOnlyHint = x.ReadOnlyHint
		a.IdempotentHint = x.IdempotentHint
		if x.DestructiveHint != nil {
			a.DestructiveHint = *x.DestructiveHint
		}
		if x.OpenWorldHint != nil {
			a.OpenWorldHint = *x.OpenWorldHint
		}
	}
	return a
}

// sameTools reports whether two lists offer the same specs.
func sameTools(a, b []*Tool) bool {
	return slices.EqualFunc(a, b, func(x, y *Tool) bool {
		return x.spec.Name == y.spec.Name && x.spec.Description == y.spec.Description &&
			bytes.Equal(x.spec.InputSchema, y.spec.InputSchema)
	})
}

// convert maps a tools/call result to a rein result: text and images as
// they are, other content as a text summary, the structured content as JSON
// text when there is no text. The text is capped at MaxOutput.
func convert(res *mcp.CallToolResult) tool.Result {
	var blocks []llm.Block
	hasText := false
	for _, c := range res.Content {
		b := block(c)
		if _, ok := b.(*llm.Text); ok {
			hasText = true
		}
		blocks = append(blocks, b)
	}
	if !hasText && res.StructuredContent != nil {
		if j, err := json.Marshal(res.StructuredContent); err == nil {
			blocks = append(blocks, &llm.Text{Text: string(j)})
		}
	}
	if len(blocks) == 0 {
		blocks = []llm.Block{&llm.Text{Text: "(the tool returned no content)"}}
	}
	return tool.Result{Content: capText(blocks, MaxOutput), IsError: res.IsError}
}

// block maps one content item.
func block(c mcp.Content) llm.Block {
	switch c := c.(type) {
	case *mcp.TextContent:
		return &llm.Text{Text: c.Text}
	case *mcp.ImageContent:
		if !modelImage(c.MIMEType) || len(c.Data) > maxImage {
			return &llm.Text{Text: fmt.Sprintf("[image omitted: %s, %d bytes]", cmp.Or(c.MIMEType, "unknown type"), len(c.Data))}
		}
		return &llm.Image{MediaType: c.MIMEType, Data: c.Data}
	case *mcp.AudioContent:
		return &llm.Text{Text: fmt.Sprintf("[audio omitted: %s, %d bytes]", cmp.Or(c.MIMEType, "unknown type"), len(c.Data))}
	case *mcp.ResourceLink:
		return &llm.Text{Text: "[resource link] " + resourceLine(c.URI, cmp.Or(c.Title, c.Name), c.MIMEType, c.Description)}
	case *mcp.EmbeddedResource:
		return &llm.Text{Text: embedded(c.Resource)}
	case nil:
		return &llm.Text{Text: "[empty content]"}
	default:
		j, _ := json.Marshal(c)
		return &llm.Text{Text: "[content] " + string(j)}
	}
}

// modelImage reports whether the model APIs take images of this type.
func modelImage(mime string) bool {
	switch mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// embedded summarises an embedded resource: its text, or a note for a blob.
func embedded(r *mcp.ResourceContents) string {
	if r == nil {
		return "[resource: empty]"
	}
	if r.Blob != nil || r.Text == "" && r.MIMEType != "" && !strings.HasPrefix(r.MIMEType, "text/") {
		return fmt.Sprintf("[resource %s: binary, %s, %d bytes]", r.URI, cmp.Or(r.MIMEType, "unknown type"), len(r.Blob))
	}
	return fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text)
}

// resourceLine describes a resource on one line.
func resourceLine(uri, name, mime, desc string) string {
	s := uri
	if name != "" {
		s += " — " + name
	}
	if mime != "" {
		s += " (" + mime + ")"
	}
	if desc = strings.Join(strings.Fields(desc), " "); desc != "" {
		s += ": " + desc
	}
	return s
}

// capText keeps at most limit bytes of text across the text blocks; the
// block where the limit falls is cut and a note follows, later text blocks
// are dropped. Images are kept.
func capText(blocks []llm.Block, limit int) []llm.Block {
	total := 0
	for _, b := range blocks {
		if t, ok := b.(*llm.Text); ok {
			total += len(t.Text)
		}
	}
	if total <= limit {
		return blocks
	}
	out := make([]llm.Block, 0, len(blocks)+1)
	shown, full := 0, false
	for _, b := range blocks {
		t, ok := b.(*llm.Text)
		switch {
		case !ok:
			out = append(out, b)
		case full:
		case shown+len(t.Text) <= limit:
			out = append(out, t)
			shown += len(t.Text)
		default:
			if cut := cutUTF8(t.Text, limit-shown); cut != "" {
				out = append(out, &llm.Text{Text: cut})
				shown += len(cut)
			}
			full = true
		}
	}
	note := fmt.Sprintf("\n[output truncated: %d of %d bytes shown]", shown, total)
	return append(out, &llm.Text{Text: note})
}

// cutUTF8 returns at most n bytes of s, not splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
