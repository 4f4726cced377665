package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// mcpKeys are the keys of a server in rein's mcp.yaml.
var mcpKeys = []string{"command", "args", "env", "url", "headers", "timeout", "disabled"}

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
//
// ${VAR} and ${VAR:-default} in command, args, env, url and headers are
// read through getenv.
func parseMCPYAML(path string, data []byte, getenv func(string) string) ([]MCPServer, []Problem) {
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
	return d.servers(n, "servers", false, getenv), d.probs
}

// parseMCPJSON reads Claude Code's .mcp.json:
//
//	{"mcpServers": {
//	  "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
//	  "docs": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}}
//
// Other keys are ignored, as Claude Code's own are.
func parseMCPJSON(path string, data []byte, getenv func(string) string) ([]MCPServer, []Problem) {
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
	return d.servers(n, "mcpServers", true, getenv), d.probs
}

// servers reads the mapping of server names to servers.
func (d *doc) servers(n *yaml.Node, what string, claude bool, getenv func(string) string) []MCPServer {
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
		if s, ok := d.server(k, m, claude, getenv); ok {
			out = append(out, s)
		}
	}
	return out
}

// server reads the fields of the server named by key k.
func (d *doc) server(k *yaml.Node, m *mapping, claude bool, getenv func(string) string) (MCPServer, bool) {
	name := k.Value
	s := MCPServer{Name: name, Path: d.path}
	s.Command = d.expand(m, getenv, "command")
	var rawArgs []string
	s.Args, rawArgs = d.expandList(m, getenv, "args")
	s.Env = d.expandMap(m, getenv, "env")
	s.URL = d.expand(m, getenv, "url")
	s.Headers = d.expandMap(m, getenv, "headers")
	s.Timeout = m.duration("timeout")
	s.Disabled = m.bool("disabled")
	if s.Declared = m.str("url"); s.URL == "" {
		s.Declared = strings.Join(append([]string{m.str("command")}, rawArgs...), " ")
	}
	not := fmt.Sprintf("(the server %s is not loaded)", name)
	if claude {
		tn, _ := m.get("type")
		switch typ := strings.ToLower(m.str("type")); typ {
		case "":
		case "stdio", "http":
			if typ == "stdio" && s.URL != "" {
				d.problem(tn, "type stdio takes a command, not a url: remove one %s", not)
				return MCPServer{}, false
			}
			if typ == "http" && s.Command != "" {
				d.problem(tn, "type http takes a url, not a command: remove one %s", not)
				return MCPServer{}, false
			}
		case "sse":
			d.problem(tn, "type sse: only streamable HTTP is supported; the server is read as type http (if it speaks only SSE it will not connect)")
		default:
			d.problem(tn, "type %q is not supported: use stdio (command) or http (url) %s", typ, not)
			return MCPServer{}, false
		}
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

// expand returns the text value of key with its variables expanded.
func (d *doc) expand(m *mapping, getenv func(string) string, key string) string {
	n, _ := m.get(key)
	return d.expandAt(n, m.str(key), getenv)
}

// expandList returns the list value of key (a YAML or JSON list) with its
// variables expanded, and as written.
func (d *doc) expandList(m *mapping, getenv func(string) string, key string) (out, raw []string) {
	n, _ := m.get(key)
	if n == nil {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		d.problem(n, "%s: want a list, got %s; it is ignored", key, kindName(n))
		return nil, nil
	}
	for _, item := range n.Content {
		item = deref(item)
		if item == nil || item.Kind != yaml.ScalarNode {
			d.problem(n, "%s: want a list of text, got %s in it; it is left out", key, kindName(item))
			continue
		}
		out = append(out, d.expandAt(item, item.Value, getenv))
		raw = append(raw, item.Value)
	}
	return out, raw
}

// expandMap returns the mapping value of key with the variables of its
// values expanded.
func (d *doc) expandMap(m *mapping, getenv func(string) string, key string) map[string]string {
	n, _ := m.get(key)
	mp := m.strMap(key)
	for k, v := range mp {
		mp[k] = d.expandAt(n, v, getenv)
	}
	return mp
}

// expandAt expands ${VAR} and ${VAR:-default} in s as Claude Code does;
// a variable unset (or empty) without a default stays as written, and is
// a problem at n.
func (d *doc) expandAt(n *yaml.Node, s string, getenv func(string) string) string {
	out, missing := expandVars(s, getenv)
	for _, v := range missing {
		d.problem(n, "${%s} is not set: set it, or write ${%s:-default}; the text is kept as written", v, v)
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
	if !nameRE.MatchString(name) || strings.Contains(name, "__") {
		return fmt.Errorf("MCP server name %q is not valid: use 1 to 64 letters, digits, - and _, without __ (its tools are named mcp__<server>__<tool>)", name)
	}
	return nil
}
