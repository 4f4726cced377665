package mcptool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool"
)

// maxList caps the resources or prompts listed per server.
const maxList = 1000

// Resource is one resource a server offers.
type Resource struct {
	Server      string
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
	Size        int64 // in bytes; 0 when unknown
}

// Prompt is one prompt a server offers.
type Prompt struct {
	Server      string
	Name        string
	Title       string
	Description string
	Arguments   []PromptArgument
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string
	Description string
	Required    bool
}

// capability reports whether a server's session offers resources
// (prompts when prompts is set).
func capability(l *live, prompts bool) bool {
	if prompts {
		return l.caps.Prompts != nil
	}
	return l.caps.Resources != nil
}

// offering returns the ready servers offering resources (or prompts),
// ordered by name.
func (m *Manager) offering(prompts bool) []*conn {
	var out []*conn
	for _, c := range m.conns {
		c.mu.Lock()
		if c.state == StateReady && capability(c.live, prompts) {
			out = append(out, c)
		}
		c.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b *conn) int { return cmp.Compare(a.cfg.Name, b.cfg.Name) })
	return out
}

// targets is the named server, or every ready server offering the feature
// when server is empty.
func (m *Manager) targets(server string, prompts bool) ([]*conn, error) {
	if server == "" {
		return m.offering(prompts), nil
	}
	c, err := m.lookup(server)
	if err != nil {
		return nil, err
	}
	return []*conn{c}, nil
}

// Resources lists the resources of a server (resources/list, every page, up
// to a thousand), or of every ready server offering resources when server is
// empty. A server that offers none gives an empty list. With several
// servers, those that fail are reported in the error, the others listed.
func (m *Manager) Resources(ctx context.Context, server string) ([]Resource, error) {
	conns, err := m.targets(server, false)
	if err != nil {
		return nil, err
	}
	var out []Resource
	var errs []error
	for _, c := range conns {
		err := c.with(ctx, "list resources", func(ctx context.Context, l *live) error {
			if !capability(l, false) {
				return nil
			}
			n := 0
			for r, err := range l.cs.Resources(ctx, nil) {
				if err != nil {
					return err
				}
				out = append(out, Resource{Server: c.cfg.Name, URI: r.URI, Name: r.Name, Title: r.Title,
					Description: r.Description, MIMEType: r.MIMEType, Size: r.Size})
				if n++; n >= maxList {
					break
				}
			}
			return nil
		})
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// ReadResource reads a resource (resources/read) and returns its text; a
// binary part is summarised as a note giving its type and size.
func (m *Manager) ReadResource(ctx context.Context, server, uri string) (string, error) {
	c, err := m.lookup(server)
	if err != nil {
		return "", err
	}
	var parts []string
	err = c.with(ctx, "read resource "+uri, func(ctx context.Context, l *live) error {
		res, err := l.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return err
		}
		for _, rc := range res.Contents {
			if rc.Blob != nil {
				parts = append(parts, fmt.Sprintf("[binary content of %s: %s, %d bytes]",
					cmp.Or(rc.URI, uri), cmp.Or(rc.MIMEType, "unknown type"), len(rc.Blob)))
				continue
			}
			parts = append(parts, rc.Text)
		}
		return nil
	})
	return strings.Join(parts, "\n"), err
}

// Prompts lists the prompts of a server (prompts/list, every page, up to a
// thousand), or of every ready server offering prompts when server is
// empty; errors as for [Manager.Resources].
func (m *Manager) Prompts(ctx context.Context, server string) ([]Prompt, error) {
	conns, err := m.targets(server, true)
	if err != nil {
		return nil, err
	}
	var out []Prompt
	var errs []error
	for _, c := range conns {
		err := c.with(ctx, "list prompts", func(ctx context.Context, l *live) error {
			if !capability(l, true) {
				return nil
			}
			n := 0
			for p, err := range l.cs.Prompts(ctx, nil) {
				if err != nil {
					return err
				}
				out = append(out, promptOf(c.cfg.Name, p))
				if n++; n >= maxList {
					break
				}
			}
			return nil
		})
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

func promptOf(server string, p *mcp.Prompt) Prompt {
	out := Prompt{Server: server, Name: p.Name, Title: p.Title, Description: p.Description}
	for _, a := range p.Arguments {
		if a != nil {
			out.Arguments = append(out.Arguments, PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
	}
	return out
}

// GetPrompt fetches a prompt with its arguments (prompts/get) and returns
// its text. A prompt of one user message is that message's text; otherwise
// each message is introduced by its role ("user: …", "assistant: …"). Other
// content than text is summarised.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) (string, error) {
	c, err := m.lookup(server)
	if err != nil {
		return "", err
	}
	var text string
	err = c.with(ctx, "get prompt "+name, func(ctx context.Context, l *live) error {
		res, err := l.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
		if err != nil {
			return err
		}
		text = promptText(res.Messages)
		return nil
	})
	return text, err
}

func promptText(msgs []*mcp.PromptMessage) string {
	msgs = slices.DeleteFunc(slices.Clone(msgs), func(m *mcp.PromptMessage) bool { return m == nil })
	parts := make([]string, 0, len(msgs))
	for _, msg := range msgs {
		t := llm.Message{Content: []llm.Block{block(msg.Content)}}.TextOf()
		if _, img := block(msg.Content).(*llm.Image); img {
			t = "[image]"
		}
		if len(msgs) > 1 || msg.Role != "user" {
			t = string(msg.Role) + ": " + t
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, "\n\n")
}

// ResourceTools returns two read-only tools over the servers' resources,
// mcp_list_resources and mcp_read_resource, when a ready server offers
// resources; nil otherwise.
func (m *Manager) ResourceTools() []tool.Tool {
	if len(m.offering(false)) == 0 {
		return nil
	}
	meta := tool.Meta{ReadOnly: true, ConcurrencySafe: true, Category: tool.CategoryRead}
	list := tool.New("mcp_list_resources",
		"List the resources (files, documents, records) that the connected MCP servers offer: one line per resource with its server, URI, name, type and description. Read one with mcp_read_resource.",
		meta, m.runListResources)
	read := tool.New("mcp_read_resource",
		"Read a resource of an MCP server by its URI, as listed by mcp_list_resources.",
		meta, m.runReadResource)
	return []tool.Tool{list, read}
}

// withheldServer is why the model may not reach the named server's
// resources, or "" when it may (SPEC MCP-2).
func (m *Manager) withheldServer(server string) string {
	if c, ok := m.byName[server]; ok && c.withheld() {
		return c.withheldMessage()
	}
	return ""
}

type listResourcesInput struct {
	Server string `json:"server,omitempty" jsonschema:"the MCP server whose resources to list; every server when omitted"`
}

type readResourceInput struct {
	Server string `json:"server" jsonschema:"the MCP server that offers the resource"`
	URI    string `json:"uri" jsonschema:"the resource's URI"`
}

func (m *Manager) runListResources(ctx context.Context, _ tool.Call, in listResourcesInput) (tool.Result, error) {
	if msg := m.withheldServer(in.Server); msg != "" {
		return tool.Errorf("%s", msg), nil
	}
	rs, err := m.Resources(ctx, in.Server)
	if err != nil && len(rs) == 0 {
		return tool.Errorf("%v", err), nil
	}
	var b strings.Builder
	withheld := map[string]bool{} // by server, asked once per listing
	for _, r := range rs {
		w, ok := withheld[r.Server]
		if !ok {
			w = m.withheldServer(r.Server) != ""
			withheld[r.Server] = w
		}
		if w {
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", r.Server, resourceLine(r.URI, cmp.Or(r.Title, r.Name), r.MIMEType, r.Description))
	}
	if err != nil {
		fmt.Fprintf(&b, "(some servers could not be listed: %v)\n", err)
	}
	if b.Len() == 0 {
		return tool.Text("No resources."), nil
	}
	return tool.Result{Content: capText([]llm.Block{&llm.Text{Text: b.String()}}, MaxOutput)}, nil
}

func (m *Manager) runReadResource(ctx context.Context, _ tool.Call, in readResourceInput) (tool.Result, error) {
	if msg := m.withheldServer(in.Server); msg != "" {
		return tool.Errorf("%s", msg), nil
	}
	text, err := m.ReadResource(ctx, in.Server, in.URI)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	return tool.Result{Content: capText([]llm.Block{&llm.Text{Text: text}}, MaxOutput)}, nil
}
