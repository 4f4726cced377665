package workspace

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/reinhq/rein/tool"
)

// actionKeys are the keys of an ACTION.yaml.
var actionKeys = []string{"name", "description", "input_schema", "command", "timeout", "env"}

// defaultInputSchema is the input of an action that declares none.
var defaultInputSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// parseAction reads an ACTION.yaml; dirName names the action when the
// file does not. ok is false when the action cannot be loaded.
func parseAction(path string, data []byte, dirName string) (a Action, probs []Problem, ok bool) {
	d := &doc{path: path}
	top := d.parse(data)
	if top == nil {
		if len(d.probs) == 0 {
			d.problem(nil, "empty: an action needs description: and command: (the action is not loaded)")
		}
		return Action{}, d.probs, false
	}
	m, ok := d.mapping(top, "ACTION.yaml")
	if !ok {
		return Action{}, d.probs, false
	}
	m.unknown("ACTION.yaml", actionKeys...)
	a = Action{Path: path}
	at, _ := m.get("name")
	if at == nil {
		at = m.node
	}
	if a.Name = m.str("name"); a.Name == "" {
		a.Name = dirName
	}
	if !nameRE().MatchString(a.Name) {
		d.problem(at, "action name %q is not valid: use 1 to 64 letters, digits, - and _ (the action is not loaded)", a.Name)
		return Action{}, d.probs, false
	}
	if a.Description = m.str("description"); a.Description == "" {
		d.problem(at, "action %s has no description: add description: saying what it does, for the model (the action is not loaded)", a.Name)
		return Action{}, d.probs, false
	}
	schema, _ := m.get("input_schema")
	if a.InputSchema, ok = d.inputSchema(schema); !ok {
		return Action{}, d.probs, false
	}
	if !d.command(m, &a) {
		return Action{}, d.probs, false
	}
	a.Timeout = m.duration("timeout")
	env, _ := m.list("env")
	for _, v := range env {
		if envNameRE().MatchString(v) {
			a.Env = append(a.Env, v)
			continue
		}
		n, _ := m.get("env")
		d.problem(n, "env: %q is not a variable name; it is ignored", v)
	}
	return a, d.probs, true
}

// inputSchema reads an action's input_schema: an object schema that
// compiles as JSON Schema; the default when n is nil.
func (d *doc) inputSchema(n *yaml.Node) (json.RawMessage, bool) {
	if n == nil {
		return defaultInputSchema, true
	}
	const fix = "write an object schema (type: object, properties: …); the action is not loaded"
	if n.Kind != yaml.MappingNode {
		d.problem(n, "input_schema: want a mapping, got %s: %s", kindName(n), fix)
		return nil, false
	}
	var v map[string]any
	if err := n.Decode(&v); err != nil {
		d.problem(n, "input_schema: %v: %s", strings.TrimPrefix(err.Error(), "yaml: "), fix)
		return nil, false
	}
	if t, _ := v["type"].(string); t != "object" {
		d.problem(n, "input_schema: the type must be object (the model passes the input as a JSON object): %s", fix)
		return nil, false
	}
	raw, err := json.Marshal(v)
	if err != nil {
		d.problem(n, "input_schema: not expressible as JSON (%v): %s", err, fix)
		return nil, false
	}
	if _, err := tool.CompileSchema(raw); err != nil {
		d.problem(n, "input_schema: not a valid JSON Schema: %v: %s", err, fix)
		return nil, false
	}
	return raw, true
}

// command reads an action's command: a list is an argv, a string a
// script for bash -c.
func (d *doc) command(m *mapping, a *Action) bool {
	n, _ := m.get("command")
	switch {
	case n == nil:
		d.problem(m.node, "action %s has no command: add command: [\"./run.sh\"] (an argv) or command: \"a shell line\" (the action is not loaded)", a.Name)
		return false
	case n.Kind == yaml.ScalarNode:
		a.Script = strings.TrimSpace(n.Value)
		return true
	case n.Kind != yaml.SequenceNode:
		d.problem(n, "command: want a list (an argv) or a string (run by bash -c), got %s (the action is not loaded)", kindName(n))
		return false
	}
	for _, item := range n.Content {
		item = deref(item)
		if item == nil || item.Kind != yaml.ScalarNode {
			d.problem(n, "command: every argument must be text, got %s (the action is not loaded)", kindName(item))
			return false
		}
		a.Command = append(a.Command, item.Value)
	}
	if len(a.Command) == 0 || strings.TrimSpace(a.Command[0]) == "" {
		d.problem(n, "command: the list is empty or its program is blank (the action is not loaded)")
		a.Command = nil
		return false
	}
	return true
}

// actions reads the */ACTION.yaml of an actions directory.
func (s *scope) actions(dir string) []Action {
	real, entries, ok := s.dir(dir)
	if !ok {
		return nil
	}
	return readEach(s, entries, func(s *scope, e fs.DirEntry) (Action, bool) {
		name := e.Name()
		link := e.Type()&fs.ModeSymlink != 0
		if strings.HasPrefix(name, ".") || (!e.IsDir() && !link) {
			return Action{}, false
		}
		ad := filepath.Join(dir, name)
		data, path, ok := s.defFile(real, ad, name, link, actionFile)
		if !ok {
			return Action{}, false
		}
		a, probs, ok := parseAction(path, data, name)
		s.add(probs)
		a.Env = s.screenEnv(path, "action "+a.Name, a.Env)
		a.Dir, a.Origin = ad, s.origin
		return a, ok
	})
}

// screenEnv returns the variables a declaration of the scope may receive
// from env: all of them but, in a workspace, rein's credentials, each
// refused with a problem (the declaration runs without them).
func (s *scope) screenEnv(path, what string, env []string) []string {
	if s.refuse == nil {
		return env
	}
	kept, refused := withoutCredentials(env, s.refuse)
	if len(refused) > 0 {
		s.probs = append(s.probs, Problem{Path: path, Credential: true, Msg: fmt.Sprintf(
			"%s names %s in env; it runs without: %s — declare it in your user configuration to pass it",
			what, strings.Join(refused, ", "), refusedCredentials)})
	}
	return kept
}
