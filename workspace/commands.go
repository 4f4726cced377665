package workspace

import (
	"encoding/json"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// Command is a custom slash command (SPEC COMPAT-1): a Markdown file of
// .rein/commands or .claude/commands in the workspace, or of the user's
// commands directory or ~/.claude/commands, typed as /NAME ARGS in the
// terminal UI or given to `rein run "/NAME ARGS"`. Its body is the prompt
// sent; package command expands it.
//
//	---
//	description: Create a git commit     # default: the body's first line
//	argument-hint: [message]
//	allowed-tools: Bash(git add:*), Bash(git commit:*)
//	model: haiku
//	---
//	Current status: !`git status`
//	Commit the staged changes with the message $ARGUMENTS.
//
// The frontmatter is optional, as in Claude Code. A file in a
// subdirectory is named with it: frontend/test.md is /frontend:test, also
// reachable as /test when no other command has that bare name (Claude
// Code's older commands used subdirectories for organisation only).
type Command struct {
	// Name is the command's name: the file's name without .md, prefixed by
	// its subdirectories joined with ":".
	Name string `json:"name"`
	// Description is the frontmatter's description, or the body's first
	// line; control characters are removed.
	Description string `json:"description"`
	// ArgumentHint says what arguments the command takes ([message]).
	ArgumentHint string `json:"argument_hint,omitempty"`
	// AllowedTools are the tools and rules the command grants for the turn
	// it starts (Claude Code's allowed-tools), as written.
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// Model is the model string or alias the command runs on; "" the
	// session's.
	Model string `json:"model,omitempty"`
	// Ignored are the frontmatter keys rein does not honour, each with
	// why; they are problems of the load too.
	Ignored []string `json:"ignored,omitempty"`
	// Body is the Markdown body: the prompt template.
	Body string `json:"-"`
	// Path is the file; Dir the commands directory it was found under.
	Path   string `json:"path"`
	Dir    string `json:"dir"`
	Origin Origin `json:"origin"`
}

// Bare is the command's name without its subdirectories (test for
// frontend:test).
func (c Command) Bare() string {
	if i := strings.LastIndexByte(c.Name, ':'); i >= 0 {
		return c.Name[i+1:]
	}
	return c.Name
}

// The bounds of reading commands: how deep subdirectories are read, and
// how many commands one directory tree may bring.
const (
	maxCommandDepth   = 3
	maxCommandsPerDir = 1000
	maxCommandText    = 200 // description and argument hint, in characters
)

// commandsDir is the directory of commands, under .rein, .claude and the
// user's configuration directory.
const commandsDir = "commands"

// CommandsDir is the workspace's commands (.rein/commands/**/*.md).
func (w Workspace) CommandsDir() string { return filepath.Join(w.Root, ".rein", commandsDir) }

// ClaudeCommandsDir is the workspace's Claude Code commands
// (.claude/commands/**/*.md).
func (w Workspace) ClaudeCommandsDir() string { return filepath.Join(w.Root, ".claude", commandsDir) }

// UserCommandsDir is the user's commands (<ConfigDir>/commands/**/*.md).
func (p Paths) UserCommandsDir() string { return p.under(p.ConfigDir, commandsDir) }

// ClaudeCommandsDir is Claude Code's user-level commands
// (~/.claude/commands).
func (p Paths) ClaudeCommandsDir() string { return p.under(p.Home, ".claude", commandsDir) }

// commandKeys are the frontmatter keys rein honours.
var commandKeys = []string{"description", "argument-hint", "allowed-tools", "model", "disable-model-invocation"}

// commandIgnored are the keys of Claude Code's command and skill
// frontmatter rein does not honour, each with what to know (SPEC
// COMPAT-1: reported, never silently dropped).
var commandIgnored = map[string]string{
	"name":             "a command is named by its file",
	"when_to_use":      "the model does not invoke commands in rein",
	"arguments":        "named arguments are not supported: use $ARGUMENTS, $0, $1, …",
	"user-invocable":   "every command is typed by its user in rein",
	"disallowed-tools": "a command cannot take tools away in rein: use a deny rule",
	"effort":           "a command's reasoning effort is not supported",
	"context":          "running a command in a forked context is not supported",
	"agent":            "running a command as a sub-agent is not supported",
	"hooks":            "a command's own hooks are not supported (declare them in .rein/hooks.yaml)",
	"paths":            "path-scoped commands are not supported",
	"shell":            "preludes always run with bash",
}

// parseCommand reads a command file; name is its name from its path.
// ok is false when it cannot be loaded; problems say why, and what else
// is wrong.
func parseCommand(path string, data []byte, name string) (c Command, probs []Problem, ok bool) {
	d := &doc{path: path}
	fm, err := splitFrontmatter(data)
	if err != nil {
		pe, _ := err.(problemErr)
		return Command{}, []Problem{{Path: path, Line: pe.line, Msg: pe.msg + " (the command is not loaded)"}}, false
	}
	c = Command{Name: name, Path: path, Body: cleanBody(fm.body)}
	if fm.found {
		d.off = fm.line - 1
		if top := d.parse(looseFrontmatter(fm.yaml)); top != nil {
			m, ok := d.mapping(top, "frontmatter")
			if !ok {
				return Command{}, d.probs, false
			}
			c.read(d, m)
		} else if len(d.probs) > 0 {
			return Command{}, d.probs, false
		}
	}
	if c.Body == "" {
		d.probs = append(d.probs, Problem{Path: path, Msg: "the command /" + name + " has no body: write the prompt below the frontmatter (the command is not loaded)"})
		return Command{}, d.probs, false
	}
	if c.Description == "" {
		first, _, _ := strings.Cut(c.Body, "\n")
		c.Description = d.oneLine(nil, "description", strings.TrimLeft(first, "# "))
	}
	return c, d.probs, true
}

// looseLine is a top-level "key: value" line of a frontmatter.
var looseLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_-]*):[ \t]+(.*?)[ \t\r]*$`) })

// looseFrontmatter is a command's frontmatter as Claude Code reads it,
// made YAML: its documentation writes `argument-hint: [message]` and
// `[pr-number] [priority]` unquoted (a YAML list, or no YAML at all), and
// a description may hold ": ". When the frontmatter is not YAML as it
// stands, or writes argument-hint so, such values are quoted, line for
// line (the lines' numbers are kept).
func looseFrontmatter(data []byte) []byte {
	var probe yaml.Node
	strict := yaml.Unmarshal(data, &probe) == nil
	lines := strings.Split(string(data), "\n")
	for i, line := range lines {
		m := looseLine().FindStringSubmatch(line)
		if m == nil || m[2] == "" || strings.ContainsAny(m[2][:1], `"'|>&*!`) {
			continue
		}
		hint := m[1] == "argument-hint" || m[1] == "argument_hint"
		if (strict && (!hint || !strings.HasPrefix(m[2], "["))) || (!hint && strings.ContainsAny(m[2][:1], "[{")) {
			continue
		}
		q, _ := json.Marshal(m[2]) // a JSON string is a YAML double-quoted one
		lines[i] = m[1] + ": " + string(q)
	}
	return []byte(strings.Join(lines, "\n"))
}

// read takes the frontmatter's keys.
func (c *Command) read(d *doc, m *mapping) {
	n, _ := m.get("description")
	c.Description = d.oneLine(n, "description", m.str("description"))
	n, _ = m.get("argument-hint", "argument_hint")
	c.ArgumentHint = d.oneLine(n, "argument-hint", m.str("argument-hint", "argument_hint"))
	c.AllowedTools, _ = m.list("allowed-tools", "allowed_tools")
	c.Model = m.str("model")
	// disable-model-invocation (true, yes, on…) holds as it stands: the
	// model never invokes a command in rein.
	for _, k := range m.keys {
		switch what, ok := commandIgnored[k.Value]; {
		case ok:
			d.problem(k, "%s: %s; /%s loads without it", k.Value, what, c.Name)
			c.Ignored = append(c.Ignored, k.Value+": "+what)
		case !inList(k.Value, commandKeys) && k.Value != "argument_hint" && k.Value != "allowed_tools":
			d.problem(k, "unknown key %q is ignored (known: %s)", k.Value, strings.Join(commandKeys, ", "))
			c.Ignored = append(c.Ignored, k.Value+": unknown key")
		}
	}
	for _, entry := range c.AllowedTools {
		if _, _, err := SplitToolEntry(entry); err != nil {
			at, _ := m.get("allowed-tools", "allowed_tools")
			d.problem(at, "allowed-tools: %v; /%s is refused until it is fixed", err, c.Name)
		}
	}
}

func inList(s string, list []string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// oneLine is text shown in a menu: one line, without control characters
// (a terminal escape in a repository's file must not reach the
// terminal), at most maxCommandText characters. What it removes is a
// problem at n.
func (d *doc) oneLine(n *yaml.Node, key, s string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			return ' '
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069'):
			return -1
		}
		return r
	}, s)
	clean = strings.Join(strings.Fields(clean), " ")
	if clean != strings.Join(strings.Fields(s), " ") {
		d.problem(n, "%s: control characters removed (a terminal escape or a bidirectional mark)", key)
	}
	if r := []rune(clean); len(r) > maxCommandText {
		clean = string(r[:maxCommandText-1]) + "…"
	}
	return clean
}

// commands reads the commands under dir: *.md files, and those of its
// subdirectories (linked ones too, inside the scope's root) down to
// maxCommandDepth, named dir:name.
func (s *scope) commands(dir string) []Command {
	var out []Command
	s.commandTree(dir, dir, "", 0, map[string]bool{}, &out)
	return out
}

// commandTree reads the directory path (prefix names its commands) into
// out; seen are the directories read, by real path, so that a link back
// up the tree is not followed.
func (s *scope) commandTree(top, path, prefix string, depth int, seen map[string]bool, out *[]Command) {
	real, entries, ok := s.dir(path)
	if !ok {
		return
	}
	if seen[real] {
		s.problem(path, 0, "a symbolic link leads back to a directory of commands already read: not read again")
		return
	}
	seen[real] = true
	var subdirs []fs.DirEntry
	found := readEach(s, entries, func(s *scope, e fs.DirEntry) (Command, bool) {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			return Command{}, false
		}
		p := filepath.Join(path, name)
		link := e.Type()&fs.ModeSymlink != 0
		if e.IsDir() || !strings.HasSuffix(name, ".md") {
			return Command{}, false
		}
		base := strings.TrimSuffix(name, ".md")
		if !nameRE().MatchString(base) {
			s.problem(p, 0, "command name %q is not valid: rename the file to 1 to 64 letters, digits, - and _ (the command is not loaded)", base)
			return Command{}, false
		}
		data, ok := s.readEntry(real, p, name, link)
		if !ok {
			return Command{}, false
		}
		c, probs, ok := parseCommand(p, data, prefix+base)
		s.add(probs)
		c.Dir, c.Origin = top, s.origin
		return c, ok
	})
	for _, e := range entries {
		name := e.Name()
		linked := e.Type()&fs.ModeSymlink != 0 && !strings.HasSuffix(name, ".md")
		if linked {
			s.t.add(filepath.Join(path, name))
		}
		linkedDir := linked && isDir(filepath.Join(path, name))
		if (e.IsDir() || linkedDir) && !strings.HasPrefix(name, ".") {
			subdirs = append(subdirs, e)
		}
	}
	if room := maxCommandsPerDir - len(*out); len(found) > room {
		s.problem(top, 0, "more than %d commands: only %d are read; remove what is not used", maxCommandsPerDir, maxCommandsPerDir)
		found = found[:room]
	}
	*out = append(*out, found...)
	for _, e := range subdirs {
		sub := filepath.Join(path, e.Name())
		switch {
		case !nameRE().MatchString(e.Name()):
			s.problem(sub, 0, "directory name %q is not valid in a command name: rename it to letters, digits, - and _ (its commands are not loaded)", e.Name())
		case depth+1 >= maxCommandDepth:
			s.problem(sub, 0, "commands nest deeper than %d directories: this one is not read; move its files up", maxCommandDepth)
		case len(*out) < maxCommandsPerDir:
			s.commandTree(top, sub, prefix+e.Name()+":", depth+1, seen, out)
		}
	}
}

// Command returns the command typed as /name: the one of that name, else
// the one command in a subdirectory whose bare name it is (test for
// frontend:test). ambiguous lists the commands a bare name could mean
// when there are several; none is returned then.
func (d *Definitions) Command(name string) (c Command, ambiguous []string, ok bool) {
	if c, ok := find(d.Commands, name, func(c Command) string { return c.Name }); ok {
		return c, nil, true
	}
	if strings.Contains(name, ":") {
		return Command{}, nil, false
	}
	var hits []Command
	for _, c := range d.Commands {
		if c.Bare() == name {
			hits = append(hits, c)
		}
	}
	switch len(hits) {
	case 0:
		return Command{}, nil, false
	case 1:
		return hits[0], nil, true
	}
	for _, h := range hits {
		ambiguous = append(ambiguous, h.Name)
	}
	return Command{}, ambiguous, false
}
