package tool

import (
	"fmt"
	"sync/atomic"

	"github.com/reinhq/rein/internal/suggest"
	"github.com/reinhq/rein/llm"
)

// Origin says where a tool comes from (SPEC TOOL-2).
type Origin string

// The origins of tools.
const (
	OriginBuiltin Origin = "builtin"
	OriginAction  Origin = "action"
	OriginSkill   Origin = "skill"
	OriginMCP     Origin = "mcp"
	OriginAgent   Origin = "agent"
)

// Entry is a registered tool with what the dispatcher needs to know of it.
type Entry struct {
	Tool   Tool
	Origin Origin
	Meta   Meta
	Schema *Schema

	// deferred is set for a tool added with AddDeferred: it holds whether
	// the tool was loaded. Entries are shared by the sets Filter derives,
	// so loading a tool shows it in all of them.
	deferred *atomic.Bool
	hint     string
}

// Set is the one registry of every tool a run may call. It keeps insertion
// order, so the tool list sent to the model is stable across turns. A Set is
// built before a run starts and only read during it; it is not safe for
// concurrent modification — except that Load may run at any time: a
// deferred tool (AddDeferred) is neither listed nor callable until it is
// loaded (SPEC MCP-2), in this set and every set Filter derived from it.
type Set struct {
	order   []string
	entries map[string]*Entry
}

// NewSet returns a set holding tools of one origin.
func NewSet(origin Origin, tools ...Tool) (*Set, error) {
	s := &Set{}
	if err := s.Add(origin, tools...); err != nil {
		return nil, err
	}
	return s, nil
}

// Add registers tools. A name already taken, or a schema that does not
// compile, is an error and nothing is added.
func (s *Set) Add(origin Origin, tools ...Tool) error { return s.add(origin, "", false, tools) }

// AddDeferred registers tools the model does not see until Load names
// them: Specs, Names and Get leave them out, and Unloaded returns hint (what
// the model must do to load one) for them. Errors are as for Add.
func (s *Set) AddDeferred(origin Origin, hint string, tools ...Tool) error {
	return s.add(origin, hint, true, tools)
}

// Load makes deferred tools visible and callable. A name that is not a
// deferred tool of the set is an error, and nothing is loaded.
func (s *Set) Load(names ...string) error {
	for _, n := range names {
		if e, ok := s.entries[n]; !ok || e.deferred == nil {
			return fmt.Errorf("tool: %q is not a deferred tool", n)
		}
	}
	for _, n := range names {
		s.entries[n].deferred.Store(true)
	}
	return nil
}

// Unloaded reports whether name is a deferred tool not loaded yet, and
// the hint given for it.
func (s *Set) Unloaded(name string) (hint string, ok bool) {
	if s == nil {
		return "", false
	}
	e, found := s.entries[name]
	if !found || !e.hidden() {
		return "", false
	}
	return e.hint, true
}

// hidden reports whether the entry is deferred and not loaded.
func (e *Entry) hidden() bool { return e.deferred != nil && !e.deferred.Load() }

func (s *Set) add(origin Origin, hint string, deferred bool, tools []Tool) error {
	if s.entries == nil {
		s.entries = map[string]*Entry{}
	}
	add := make([]*Entry, 0, len(tools))
	seen := map[string]bool{}
	var err error
	for _, t := range tools {
		spec := t.Spec()
		if spec.Name == "" {
			return fmt.Errorf("tool: a %s tool has no name", origin)
		}
		if _, dup := s.entries[spec.Name]; dup || seen[spec.Name] {
			return fmt.Errorf("tool: %q is registered twice; rename one of them", spec.Name)
		}
		var schema *Schema
		if origin == OriginBuiltin {
			schema = deferSchema(spec.InputSchema)
		} else if schema, err = compileShared(spec.InputSchema); err != nil {
			return fmt.Errorf("tool %q: %w", spec.Name, err)
		}
		seen[spec.Name] = true
		e := &Entry{Tool: t, Origin: origin, Meta: MetaOf(t), Schema: schema, hint: hint}
		if deferred {
			e.deferred = new(atomic.Bool)
		}
		add = append(add, e)
	}
	for _, e := range add {
		name := e.Tool.Spec().Name
		s.entries[name] = e
		s.order = append(s.order, name)
	}
	return nil
}

// Get returns the entry of a tool by name.
func (s *Set) Get(name string) (*Entry, bool) {
	if s == nil {
		return nil, false
	}
	e, ok := s.entries[name]
	if !ok || e.hidden() {
		return nil, false
	}
	return e, true
}

// Names returns the tool names in registration order (deferred tools once
// loaded).
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	out := make([]string, 0, len(s.order))
	for _, n := range s.order {
		if !s.entries[n].hidden() {
			out = append(out, n)
		}
	}
	return out
}

// Specs returns the tools' specs in registration order (deferred tools once
// loaded).
func (s *Set) Specs() []llm.ToolSpec {
	if s == nil {
		return nil
	}
	out := make([]llm.ToolSpec, 0, len(s.order))
	for _, n := range s.order {
		if e := s.entries[n]; !e.hidden() {
			out = append(out, e.Tool.Spec())
		}
	}
	return out
}

// Filter returns a set holding only the tools keep accepts, in the same order.
func (s *Set) Filter(keep func(name string, e *Entry) bool) *Set {
	out := &Set{entries: map[string]*Entry{}}
	if s == nil {
		return out
	}
	for _, n := range s.order {
		if e := s.entries[n]; keep(n, e) {
			out.entries[n] = e
			out.order = append(out.order, n)
		}
	}
	return out
}

// Swap returns a set like s in which t stands in the place of the tool of
// its name: how a run binds a tool to what only the run knows (the user
// its ask_user asks). The model sees the same list: t's spec must be the
// one it replaces. s is not changed.
func (s *Set) Swap(t Tool) (*Set, error) {
	spec := t.Spec()
	var e *Entry
	if s != nil {
		e = s.entries[spec.Name]
	}
	if e == nil {
		return nil, fmt.Errorf("tool: no %q to swap", spec.Name)
	}
	if old := e.Tool.Spec(); old.Description != spec.Description || string(old.InputSchema) != string(spec.InputSchema) {
		return nil, fmt.Errorf("tool: %q swapped for a tool of another spec", spec.Name)
	}
	out := s.Filter(func(string, *Entry) bool { return true })
	n := *e
	n.Tool = t
	out.entries[spec.Name] = &n
	return out, nil
}

// Closest returns up to n registered names nearest to name, for the error an
// unknown tool gets.
func (s *Set) Closest(name string, n int) []string {
	return suggest.Closest(name, s.Names(), n)
}
