package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// frontmatter is a Markdown file split at its YAML frontmatter.
type frontmatter struct {
	// found: the file starts with a --- line and a later --- line ends
	// the frontmatter.
	found bool
	// yaml is what lies between the two lines; line is the file's line
	// number of its first line.
	yaml []byte
	line int
	// body is what follows (the whole file when there is no frontmatter).
	body string
}

var bom = []byte("\xef\xbb\xbf")

// splitFrontmatter splits a Markdown file at its frontmatter: a first
// line "---", YAML, and a line "---". A UTF-8 byte order mark and CRLF
// line ends are tolerated. A file whose first line opens a frontmatter
// never closed is an error with its line.
func splitFrontmatter(data []byte) (frontmatter, error) {
	data = bytes.TrimPrefix(data, bom)
	first, _, more := bytes.Cut(data, []byte("\n"))
	if !isFence(first) {
		return frontmatter{body: string(data)}, nil
	}
	unclosed := problemErr{line: 1, msg: "the frontmatter opened on line 1 is never closed: end it with a line ---"}
	if !more {
		return frontmatter{}, unclosed
	}
	start := len(first) + 1
	for off := start; off < len(data); {
		lineEnd, next := len(data), len(data)
		if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
			lineEnd, next = off+i, off+i+1
		}
		if isFence(data[off:lineEnd]) {
			return frontmatter{found: true, yaml: data[start:off], line: 2, body: string(data[next:])}, nil
		}
		off = next
	}
	return frontmatter{}, unclosed
}

// isFence reports whether a line is "---", give or take trailing blanks
// and a CR.
func isFence(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// cleanBody is a Markdown body with LF line ends, without the blank
// lines and spaces around it.
func cleanBody(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
}

// problemErr is an error at a line of a file.
type problemErr struct {
	line int
	msg  string
}

func (e problemErr) Error() string {
	if e.line > 0 {
		return "line " + strconv.Itoa(e.line) + ": " + e.msg
	}
	return e.msg
}

// doc reads one YAML document of a file, turning what is wrong into
// Problems at the file's lines: off is added to a node's line (the
// frontmatter's first line is not the file's).
type doc struct {
	path  string
	off   int
	probs []Problem
}

// problem records what is wrong at the node's line (0 without one).
func (d *doc) problem(n *yaml.Node, format string, args ...any) {
	line := 0
	if n != nil && n.Line > 0 {
		line = n.Line + d.off
	}
	d.probs = append(d.probs, Problem{Path: d.path, Line: line, Msg: fmt.Sprintf(format, args...)})
}

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: (?:line (\d+): )?`) })

// yamlParserProblems are the problems of go-yaml's parser (as opposed to
// its scanner): it reports their lines counted from 0, and none on the
// first line.
var yamlParserProblems = []string{
	"did not find expected ',' or ']'", "did not find expected ',' or '}'", "did not find expected '-' indicator",
	"did not find expected <document start>", "did not find expected <stream-start>", "did not find expected key",
	"did not find expected node content", "found duplicate %TAG directive", "found duplicate %YAML directive",
	"found incompatible YAML document",
}

// yamlErrorLine returns the line (counted from 1, 0 when unknown) and the
// message of a go-yaml parse error.
func yamlErrorLine(err error) (int, string) {
	msg := err.Error()
	m := yamlLine().FindStringSubmatch(msg)
	if m == nil {
		return 0, msg
	}
	msg = msg[len(m[0]):]
	line, _ := strconv.Atoi(m[1])
	if slices.Contains(yamlParserProblems, msg) {
		line++
	}
	return line, msg
}

// parse reads a YAML document and returns its top node; nil when it is
// empty or does not parse (a problem says why, at the file's line).
func (d *doc) parse(data []byte) *yaml.Node {
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		line, msg := yamlErrorLine(err)
		if line > 0 {
			line += d.off
		}
		d.probs = append(d.probs, Problem{Path: d.path, Line: line, Msg: "not valid YAML: " + msg})
		return nil
	}
	if n.Kind != yaml.DocumentNode || len(n.Content) == 0 {
		return nil
	}
	top := deref(n.Content[0])
	if isNull(top) {
		return nil
	}
	return top
}

// deref follows aliases to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

// mapping is a YAML mapping read key by key.
type mapping struct {
	d    *doc
	node *yaml.Node
	keys []*yaml.Node
	vals map[string]*yaml.Node
}

// mapping returns n as a mapping; a node of another kind is a problem
// naming what was expected.
func (d *doc) mapping(n *yaml.Node, what string) (*mapping, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.problem(n, "%s: want a mapping (key: value), got %s", what, kindName(n))
		return nil, false
	}
	m := &mapping{d: d, node: n, vals: make(map[string]*yaml.Node, len(n.Content)/2)}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			d.problem(n.Content[i], "%s: a key must be plain text", what)
			continue
		}
		if prev, ok := m.vals[k.Value]; ok {
			d.problem(k, "%q is given twice (first on line %d): the last one is used; remove one", k.Value, prev.Line+d.off)
		} else {
			m.keys = append(m.keys, k)
		}
		m.vals[k.Value] = v
	}
	return m, true
}

// kindName names the kind of a node for a problem.
func kindName(n *yaml.Node) string {
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case isNull(n):
		return "nothing"
	}
	return strconv.Quote(clip(n.Value, 40))
}

// unknown records a problem for each key not in known; the key is
// ignored.
func (m *mapping) unknown(what string, known ...string) {
	for _, k := range m.keys {
		if !slices.Contains(known, k.Value) {
			m.d.problem(k, "%s: unknown key %q is ignored (known: %s)", what, k.Value, strings.Join(known, ", "))
		}
	}
}

// get returns the value of the first of names present (a format's
// spellings of one key) and that name; nil for none, or a null value.
func (m *mapping) get(names ...string) (*yaml.Node, string) {
	for _, name := range names {
		if v, ok := m.vals[name]; ok {
			v = deref(v)
			if v == nil || isNull(v) {
				return nil, name
			}
			return v, name
		}
	}
	return nil, ""
}

// str returns a text value; a list or a mapping is a problem.
func (m *mapping) str(names ...string) string {
	v, name := m.get(names...)
	if v == nil {
		return ""
	}
	if v.Kind != yaml.ScalarNode {
		m.d.problem(v, "%s: want text, got %s", name, kindName(v))
		return ""
	}
	return strings.TrimSpace(v.Value)
}

// list returns a list of text: a YAML list, or one string split at
// commas and blanks outside parentheses ("Read, Grep, Bash(git diff:*)").
// set is false when the key is absent or null; an empty list is set.
func (m *mapping) list(names ...string) (out []string, set bool) {
	v, name := m.get(names...)
	if v == nil {
		return nil, false
	}
	switch v.Kind {
	case yaml.ScalarNode:
		return splitList(v.Value), true
	case yaml.SequenceNode:
		out = []string{}
		for _, item := range v.Content {
			item = deref(item)
			if item == nil || item.Kind != yaml.ScalarNode {
				m.d.problem(v, "%s: want a list of text, got %s in it", name, kindName(item))
				continue
			}
			if s := strings.TrimSpace(item.Value); s != "" {
				out = append(out, s)
			}
		}
		return out, true
	}
	m.d.problem(v, "%s: want a list, got %s", name, kindName(v))
	return nil, false
}

// splitList splits a string at commas and blanks outside parentheses.
func splitList(s string) []string {
	out := []string{}
	depth, start := 0, 0
	flush := func(end int) {
		if item := strings.TrimSpace(s[start:end]); item != "" {
			out = append(out, item)
		}
	}
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0 && (r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'):
			flush(i)
			start = i + 1
		}
	}
	flush(len(s))
	return out
}

// int returns a whole number of at least 0; another value is a problem
// and reads as 0.
func (m *mapping) int(names ...string) int {
	v, name := m.get(names...)
	if v == nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(v.Value))
	if v.Kind != yaml.ScalarNode || err != nil || n < 0 {
		m.d.problem(v, "%s: want a whole number of at least 0, got %s; it is ignored", name, kindName(v))
		return 0
	}
	return n
}

// bool returns a true or false value; another is a problem and reads as
// false.
func (m *mapping) bool(names ...string) bool {
	v, name := m.get(names...)
	if v == nil {
		return false
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v.Value))
	if v.Kind != yaml.ScalarNode || err != nil {
		m.d.problem(v, "%s: want true or false, got %s", name, kindName(v))
		return false
	}
	return b
}

// duration returns a duration written "90s", "5m" or as seconds; another
// value is a problem and reads as 0 (the default).
func (m *mapping) duration(names ...string) time.Duration {
	v, name := m.get(names...)
	if v == nil {
		return 0
	}
	if v.Kind != yaml.ScalarNode {
		m.d.problem(v, "%s: want a duration such as 90s or 5m, got %s", name, kindName(v))
		return 0
	}
	d, err := ParseDuration(v.Value)
	if err != nil {
		m.d.problem(v, "%s: %v; the default is used", name, err)
		return 0
	}
	return d
}

// strMap returns a mapping of text to text; nil when absent.
func (m *mapping) strMap(names ...string) map[string]string {
	v, name := m.get(names...)
	if v == nil {
		return nil
	}
	sub, ok := m.d.mapping(v, name)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(sub.keys))
	for _, k := range sub.keys {
		val := deref(sub.vals[k.Value])
		switch {
		case val == nil || isNull(val):
			out[k.Value] = ""
		case val.Kind == yaml.ScalarNode:
			out[k.Value] = val.Value
		default:
			m.d.problem(val, "%s: %s: want text, got %s", name, k.Value, kindName(val))
		}
	}
	return out
}

// nameRE is a valid name of an agent, an action or an MCP server.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`) })

// envNameRE is a valid environment variable name.
var envNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// errNoFrontmatter is the problem of a Markdown definition with none.
var errNoFrontmatter = errors.New("no frontmatter: start the file with a line ---, then name: and description:, then a line ---")
