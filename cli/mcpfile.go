package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/reinhq/rein/workspace"
)

// mcpEntry is a server as rein mcp add writes it into an mcp.yaml.
type mcpEntry struct {
	Type    string // "sse", or empty
	Command string
	Args    []string
	URL     string
	Env     [][2]string // in the order given
	Headers [][2]string
	Timeout string
}

// node is the entry as a YAML mapping.
func (e mcpEntry) node() *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	add := func(key string, v *yaml.Node) { m.Content = append(m.Content, str(key), v) }
	if e.Type != "" {
		add("type", str(e.Type))
	}
	if e.Command != "" {
		add("command", str(e.Command))
	}
	if len(e.Args) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, a := range e.Args {
			seq.Content = append(seq.Content, str(a))
		}
		add("args", seq)
	}
	if e.URL != "" {
		add("url", str(e.URL))
	}
	for _, kv := range []struct {
		key   string
		pairs [][2]string
	}{{"env", e.Env}, {"headers", e.Headers}} {
		if len(kv.pairs) == 0 {
			continue
		}
		mp := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, p := range kv.pairs {
			mp.Content = append(mp.Content, str(p[0]), str(p[1]))
		}
		add(kv.key, mp)
	}
	if e.Timeout != "" {
		add("timeout", str(e.Timeout))
	}
	return m
}

// str is a YAML text scalar; the encoder quotes it when it would read as
// something else (true, 10, null).
func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// mcpFile is an mcp.yaml being edited as YAML nodes, so the other entries
// and the comments stay as written.
type mcpFile struct {
	path    string
	doc     *yaml.Node // the document
	servers *yaml.Node // the mapping under servers:
	perm    fs.FileMode
	exists  bool
}

// openMCPFile reads path for editing; a file that does not exist is an
// empty one, to be written with perm.
func openMCPFile(path string, perm fs.FileMode) (*mcpFile, error) {
	f := &mcpFile{path: path, perm: perm}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		f.exists = true
		if fi, err := os.Stat(path); err == nil {
			f.perm = fi.Mode().Perm()
		}
	}
	var doc yaml.Node
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode}
		if f.exists {
			doc.HeadComment = strings.TrimSpace(string(data)) // a file of comments only
		}
	}
	if len(doc.Content) == 0 || (doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].Tag == "!!null") {
		doc.Content = []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: want a mapping with servers:, got something else; fix the file first", path)
	}
	f.doc = &doc
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "servers" {
			v := top.Content[i+1]
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				v.Kind, v.Tag, v.Value = yaml.MappingNode, "!!map", ""
			}
			if v.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("%s:%d: servers: want a mapping of names to servers; fix the file first", path, v.Line)
			}
			f.servers = v
			return f, nil
		}
	}
	f.servers = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	top.Content = append(top.Content, str("servers"), f.servers)
	return f, nil
}

// index returns the position of name's key among the servers, or -1.
func (f *mcpFile) index(name string) int {
	for i := 0; i+1 < len(f.servers.Content); i += 2 {
		if f.servers.Content[i].Value == name {
			return i
		}
	}
	return -1
}

// has reports whether the file declares a server called name.
func (f *mcpFile) has(name string) bool { return f.index(name) >= 0 }

// put sets the server called name, replacing its entry in place (the
// key's comments kept) or adding it at the end.
func (f *mcpFile) put(name string, v *yaml.Node) {
	if i := f.index(name); i >= 0 {
		old := f.servers.Content[i+1]
		v.HeadComment, v.LineComment, v.FootComment = old.HeadComment, old.LineComment, old.FootComment
		f.servers.Content[i+1] = v
		return
	}
	f.servers.Content = append(f.servers.Content, str(name), v)
}

// remove deletes the server called name; false when there is none.
func (f *mcpFile) remove(name string) bool {
	i := f.index(name)
	if i < 0 {
		return false
	}
	f.servers.Content = slices.Delete(f.servers.Content, i, i+2)
	return true
}

// save writes the file atomically (a temporary file renamed over it).
func (f *mcpFile) save() error {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(f.doc); err != nil {
		return fmt.Errorf("%s: %v", f.path, err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("%s: %v", f.path, err)
	}
	data := b.Bytes()
	if !f.exists {
		data = append([]byte(mcpHeader), data...)
	}
	if err := workspace.WriteFileAtomic(f.path, data, f.perm); err != nil {
		return fmt.Errorf("writing %s: %v", f.path, err)
	}
	return nil
}

// mcpHeader starts an mcp.yaml rein mcp add creates.
const mcpHeader = "# MCP servers (docs/mcp.md): `rein mcp add|remove|list|test` edit and check this file.\n"
