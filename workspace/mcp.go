package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// mcpKeys are the keys of a server in rein's mcp.yaml.
var mcpKeys = []string{"type", "command", "args", "env", "url", "headers", "timeout", "disabled"}

// parseMCPYAML reads rein's mcp.yaml:
//
//	servers:
//	  github:
//	    command: npx
//	    args: ["-y", "@modelcontextprotocol/server-github"]
//	    env: {GITHUB_TOKEN: "${GITHUB_TOKEN}"}
//	    timeout: 60s
//	  docs:
//	    url: https://mcp.example.com/mcp
//	    headers: {Authorization: "Bearer ${DOCS_TOKEN}"}
//	  legacy:
//	    type: sse
//	    url: https://mcp.example.com/sse
//
// ${VAR} and ${VAR:-default} in command, args, env, url and headers are
// read through env; type is stdio, http or sse, as in .mcp.json.
func parseMCPYAML(path string, data []byte, env envReader) ([]MCPServer, []Problem) {
	d := &doc{path: path}
	top := d.parse(data)
	if top == nil {
		return nil, d.probs
	}
	m, ok := d.mapping(top, "mcp.yaml")
	if !ok {
		return nil, d.probs
	}
	m.unknown("mcp.yaml", "servers")
	n, _ := m.get("servers")
	return d.servers(n, "servers", false, env), d.probs
}

// parseMCPJSON reads Claude Code's .mcp.json:
//
//	{"mcpServers": {
//	  "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
//	  "docs": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}},
//	  "legacy": {"type": "sse", "url": "${SSE_BASE:-http://127.0.0.1:8080}/sse"}}}
//
// Other keys are ignored, as Claude Code's own are.
func parseMCPJSON(path string, data []byte, env envReader) ([]MCPServer, []Problem) {
	d := &doc{path: path}
	if len(bytes.TrimSpace(bytes.TrimPrefix(data, bom))) == 0 {
		return nil, nil
	}
	top, err := jsonNode(bytes.TrimPrefix(data, bom))
	if err != nil {
		var pe problemErr
		errors.As(err, &pe)
		d.probs = append(d.probs, Problem{Path: path, Line: pe.line, Msg: "not valid JSON: " + pe.msg})
		return nil, d.probs
	}
	m, ok := d.mapping(top, ".mcp.json")
	if !ok {
		return nil, d.probs
	}
	n, _ := m.get("mcpServers")
	return d.servers(n, "mcpServers", true, env), d.probs
}

// servers reads the mapping of server names to servers.
func (d *doc) servers(n *yaml.Node, what string, claude bool, env envReader) []MCPServer {
	if n == nil {
		return nil
	}
	all, ok := d.mapping(n, what)
	if !ok {
		return nil
	}
	var out []MCPServer
	for _, k := range all.keys {
		name := k.Value
		if err := CheckMCPName(name); err != nil {
			d.problem(k, "%v (the server is not loaded)", err)
			continue
		}
		m, ok := d.mapping(all.vals[name], "MCP server "+name)
		if !ok {
			continue
		}
		if !claude {
			m.unknown("MCP server "+name, mcpKeys...)
		}
		if s, ok := d.server(k, m, claude, env); ok {
			out = append(out, s)
		}
	}
	return out
}

// server reads the fields of the server named by key k.
func (d *doc) server(k *yaml.Node, m *mapping, claude bool, env envReader) (MCPServer, bool) {
	name := k.Value
	s := MCPServer{Name: name, Path: d.path}
	x := &expander{d: d, env: env}
	s.Command = x.expand(m, "command")
	var rawArgs []string
	s.Args, rawArgs = x.expandList(m, "args")
	s.Env = x.expandMap(m, "env")
	s.URL = x.expand(m, "url")
	s.Headers = x.expandMap(m, "headers")
	s.Timeout = m.duration("timeout")
	s.Disabled = m.bool("disabled")
	if s.Declared = m.str("url"); s.URL == "" {
		s.Declared = strings.Join(append([]string{m.str("command")}, rawArgs...), " ")
	}
	not := fmt.Sprintf("(the server %s is not loaded)", name)
	if len(x.missing) > 0 {
		d.problem(k, "MCP server %s: %s not set: set it, or write ${NAME:-default} in the file %s",
			name, strings.Join(x.missing, ", "), not)
		return MCPServer{}, false
	}
	if len(x.refused) > 0 {
		d.problem(k, "MCP server %s names %s: %s; declare the server in your user configuration (rein's mcp.yaml in your config directory) to pass it %s",
			name, strings.Join(x.refused, ", "), refusedCredentials, not)
		d.probs[len(d.probs)-1].Credential = true
		return MCPServer{}, false
	}
	tn, _ := m.get("type")
	switch typ := strings.ToLower(m.str("type")); typ {
	case "":
	case "stdio", "http", "streamable-http", "sse":
		if typ == "stdio" && s.URL != "" {
			d.problem(tn, "type stdio takes a command, not a url: remove one %s", not)
			return MCPServer{}, false
		}
		if typ != "stdio" && s.Command != "" {
			d.problem(tn, "type %s takes a url, not a command: remove one %s", typ, not)
			return MCPServer{}, false
		}
		if typ == "sse" {
			s.Transport = "sse"
		}
	default:
		d.problem(tn, "type %q is not supported: use stdio (command), http (url, streamable HTTP) or sse (url, the older HTTP+SSE transport) %s", typ, not)
		return MCPServer{}, false
	}
	switch {
	case s.Command != "" && s.URL != "":
		d.problem(k, "MCP server %s has both a command and a url: keep command (stdio) or url (streamable HTTP) %s", name, not)
		return MCPServer{}, false
	case s.Command == "" && s.URL == "" && !s.Disabled:
		d.problem(k, "MCP server %s has neither a command nor a url: add command: (stdio) or url: (streamable HTTP) %s", name, not)
		return MCPServer{}, false
	case s.Command == "" && s.URL == "":
		s.Declared = ""
	case s.URL == "" && len(s.Headers) > 0:
		d.problem(k, "MCP server %s: headers are only sent to a url; they are ignored", name)
		s.Headers = nil
	}
	return s, true
}

// envReader reads the variables ${VAR} stands for in an MCP servers
// file.
type envReader struct {
	getenv func(string) string
	// refuse, when set, names the variables the file may not read: rein's
	// credentials, for a workspace's file (see [Loaded.Credential]).
	refuse func(string) bool
}

// expander expands the variables of one server's fields, noting those it
// refused.
type expander struct {
	d       *doc
	env     envReader
	refused []string // "${NAME} in field"
	missing []string // "${NAME} (in field)": unset, without a default
}

// expand returns the text value of key with its variables expanded.
func (x *expander) expand(m *mapping, key string) string {
	return x.expandAt(m.str(key), key)
}

// expandList returns the list value of key (a YAML or JSON list) with its
// variables expanded, and as written.
func (x *expander) expandList(m *mapping, key string) (out, raw []string) {
	n, _ := m.get(key)
	if n == nil {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		x.d.problem(n, "%s: want a list, got %s; it is ignored", key, kindName(n))
		return nil, nil
	}
	for _, item := range n.Content {
		item = deref(item)
		if item == nil || item.Kind != yaml.ScalarNode {
			x.d.problem(n, "%s: want a list of text, got %s in it; it is left out", key, kindName(item))
			continue
		}
		out = append(out, x.expandAt(item.Value, key))
		raw = append(raw, item.Value)
	}
	return out, raw
}

// expandMap returns the mapping value of key with the variables of its
// values expanded.
func (x *expander) expandMap(m *mapping, key string) map[string]string {
	mp := m.strMap(key)
	for _, k := range slices.Sorted(maps.Keys(mp)) {
		mp[k] = x.expandAt(mp[k], key+"."+k)
	}
	return mp
}

// expandAt expands ${VAR} and ${VAR:-default} in s, the value of field,
// as Claude Code does. A variable unset (or empty) without a default is
// noted: the server is then not loaded, and the problem names the server
// and the variable (Claude Code would send the text as written, which
// fails later and less clearly). A variable the reader refuses is noted,
// and stays as written.
func (x *expander) expandAt(s, field string) string {
	getenv := x.env.getenv
	if x.env.refuse != nil {
		getenv = func(name string) string {
			if x.env.refuse(name) {
				if ref := "${" + name + "} in " + field; !slices.Contains(x.refused, ref) {
					x.refused = append(x.refused, ref)
				}
				return ""
			}
			return x.env.getenv(name)
		}
	}
	out, missing := expandVars(s, getenv)
	for _, v := range missing {
		if x.env.refuse == nil || !x.env.refuse(v) {
			if ref := "${" + v + "} (in " + field + ")"; !slices.Contains(x.missing, ref) {
				x.missing = append(x.missing, ref)
			}
		}
	}
	return out
}

// expandVars replaces each ${VAR} and ${VAR:-default} of s; it returns
// the variables left unexpanded.
func expandVars(s string, getenv func(string) string) (string, []string) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	var missing []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j <= 0 {
			b.WriteString(s[:i+2])
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		name, def, hasDef := strings.Cut(s[i+2:i+2+j], ":-")
		switch v := getenv(name); {
		case v != "":
			b.WriteString(v)
		case hasDef:
			b.WriteString(def)
		default:
			b.WriteString(s[i : i+3+j])
			missing = append(missing, name)
		}
		s = s[i+3+j:]
	}
	b.WriteString(s)
	return b.String(), missing
}

// maxJSONDepth bounds the nesting of a JSON file read.
const maxJSONDepth = 64

// jsonNode parses a JSON document into YAML nodes carrying line numbers,
// so JSON and YAML files are read by the same code. Its error is a
// problemErr with the line.
func jsonNode(data []byte) (*yaml.Node, error) {
	r := &jsonReader{dec: json.NewDecoder(bytes.NewReader(data)), data: data}
	r.dec.UseNumber()
	n, err := r.value(0)
	if err != nil {
		return nil, err
	}
	if _, err := r.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, problemErr{line: r.line(), msg: "text after the end of the document"}
	}
	return n, nil
}

// jsonReader reads JSON tokens, knowing their lines.
type jsonReader struct {
	dec   *json.Decoder
	data  []byte
	lines []int // offsets of the line ends, computed once
}

// line is the line of the decoder's position.
func (r *jsonReader) line() int {
	if r.lines == nil {
		r.lines = []int{}
		for i, c := range r.data {
			if c == '\n' {
				r.lines = append(r.lines, i)
			}
		}
	}
	off := int(r.dec.InputOffset())
	return sort.SearchInts(r.lines, off) + 1
}

// fail turns a decoding error into a problemErr at its line.
func (r *jsonReader) fail(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return problemErr{line: r.line(), msg: err.Error()}
}

// value reads one JSON value.
func (r *jsonReader) value(depth int) (*yaml.Node, error) {
	if depth > maxJSONDepth {
		return nil, problemErr{line: r.line(), msg: fmt.Sprintf("nested deeper than %d", maxJSONDepth)}
	}
	tok, err := r.dec.Token()
	if err != nil {
		return nil, r.fail(err)
	}
	line := r.line()
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return r.object(depth, line)
		}
		if t == '[' {
			return r.array(depth, line)
		}
		return nil, problemErr{line: line, msg: fmt.Sprintf("unexpected %q", string(t))}
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t, Line: line}, nil
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(t), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(t), Line: line}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(t), Line: line}, nil
	default:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null", Line: line}, nil
	}
}

// object reads the members of an object whose { was read.
func (r *jsonReader) object(depth, line int) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line}
	for r.dec.More() {
		tok, err := r.dec.Token()
		if err != nil {
			return nil, r.fail(err)
		}
		key, _ := tok.(string)
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: r.line()}
		v, err := r.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, k, v)
	}
	if _, err := r.dec.Token(); err != nil {
		return nil, r.fail(err)
	}
	return n, nil
}

// array reads the elements of an array whose [ was read.
func (r *jsonReader) array(depth, line int) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: line}
	for r.dec.More() {
		v, err := r.value(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, v)
	}
	if _, err := r.dec.Token(); err != nil {
		return nil, r.fail(err)
	}
	return n, nil
}

// CheckMCPName validates an MCP server's name: 1 to 64 letters, digits, -
// and _, without "__" (its tools are named mcp__<server>__<tool>).
func CheckMCPName(name string) error {
	if !nameRE().MatchString(name) || strings.Contains(name, "__") {
		return fmt.Errorf("MCP server name %q is not valid: use 1 to 64 letters, digits, - and _, without __ (its tools are named mcp__<server>__<tool>)", name)
	}
	return nil
}
