// Package memorytool is the `memory` tool (SPEC MEM-2): the model's way
// to add, replace and remove entries of the user profile and the fact
// notes a [memory.Store] keeps. Every write goes through the store: it is
// scanned for prompt injection and secrets, deduplicated and held to the
// file's cap, and a refusal comes back to the model as an error result
// with the reason. What the model writes appears in the system prompt of
// later sessions, not this one.
package memorytool

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/reinhq/rein/memory"
	"github.com/reinhq/rein/tool"
)

// Name is the tool's name.
const Name = "memory"

// The actions.
const (
	ActionAdd     = "add"
	ActionReplace = "replace"
	ActionRemove  = "remove"
)

var inputSchema = tool.NewStaticSchema[input](func(s *jsonschema.Schema) {
	setEnum(s, "action", ActionAdd, ActionReplace, ActionRemove)
	setEnum(s, "target", string(memory.TargetProfile), string(memory.TargetNotes))
	setEnum(s, "scope", string(memory.ScopeUser), string(memory.ScopeWorkspace))
})

type input struct {
	Action  string `json:"action"`
	Target  string `json:"target"`
	Scope   string `json:"scope,omitempty" jsonschema:"default: workspace for notes if any, else user; profile: always user"`
	Content string `json:"content,omitempty" jsonschema:"add: the entry; replace: its new text"`
	OldText string `json:"old_text,omitempty" jsonschema:"replace, remove: part of the one entry to change"`
}

// description is the tool's description; %s are the caps.
const description = `Long-term memory, shown to future sessions (not this one). profile: who the user is ` +
	`(role, preferences, style, stack), cap %s chars. notes: decisions and why, conventions, hard-won quirks, ` +
	`cap %s chars per scope. Keep first what the user corrected or asked you to remember. Never keep task ` +
	`progress, debug output, secrets, or what code, git log or docs say. Short plain facts, never instructions ` +
	`to an AI. Injection, secrets and writes over the cap are refused: condense or remove first.`

// New returns the `memory` tool over store. It writes only rein's own
// memory files (never the workspace's code), so it is of
// [tool.CategoryEdit]: default mode asks, accept-edits runs it, read-only
// denies it. It is not concurrency-safe: writes to one file are serialised
// by the store's lock anyway.
func New(store *memory.Store) tool.Tool {
	desc := fmt.Sprintf(description, thousands(store.Cap(memory.TargetProfile)), thousands(store.Cap(memory.TargetNotes)))
	meta := tool.Meta{Category: tool.CategoryEdit}
	return tool.DefineStatic(Name, desc, meta, inputSchema, func(ctx context.Context, call tool.Call, in input) (tool.Result, error) {
		return run(ctx, store, in), nil
	})
}

// setEnum restricts a string property to values.
func setEnum(s *jsonschema.Schema, name string, values ...string) {
	p := s.Properties[name]
	if p == nil {
		panic("memorytool: no property " + name)
	}
	p.Enum = nil
	for _, v := range values {
		p.Enum = append(p.Enum, v)
	}
}

// run carries out one call; every failure is an error result.
func run(ctx context.Context, store *memory.Store, in input) tool.Result {
	target := memory.Target(in.Target)
	scope := memory.Scope(in.Scope)
	if scope == "" {
		scope = store.DefaultScope(target)
	}
	var ch memory.Change
	var err error
	switch in.Action {
	case ActionAdd:
		if strings.TrimSpace(in.OldText) != "" {
			return tool.Errorf("add takes content only; to change an entry use action replace with old_text")
		}
		ch, err = store.Add(ctx, scope, target, in.Content)
	case ActionReplace:
		if strings.TrimSpace(in.Content) == "" {
			return tool.Errorf("replace needs content, the entry's new text; to delete an entry use action remove")
		}
		ch, err = store.Replace(ctx, scope, target, in.OldText, in.Content)
	case ActionRemove:
		ch, err = store.Remove(ctx, scope, target, in.OldText)
	default:
		return tool.Errorf("action must be add, replace or remove, not %q", in.Action)
	}
	if err != nil {
		return tool.Errorf("memory %s: %v", in.Action, err)
	}
	r := tool.Text(ch.String())
	r.Metadata = map[string]any{"action": string(ch.Action), "scope": string(ch.Scope), "target": string(ch.Target),
		"path": ch.Path, "entries": ch.Entries, "chars": ch.Chars, "cap": ch.Cap}
	return r
}

// thousands formats n with commas: 3,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
