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

type input struct {
	Action  string `json:"action" jsonschema:"add a new entry, replace one entry's text, or remove one entry"`
	Target  string `json:"target" jsonschema:"profile (who the user is, preferences) or notes (decisions, conventions, facts)"`
	Scope   string `json:"scope,omitempty" jsonschema:"user (every workspace) or workspace (this one). Default: workspace for notes when there is a workspace, user otherwise; the profile is always user"`
	Content string `json:"content,omitempty" jsonschema:"add: the new entry; replace: the entry's new text. One fact or preference, a sentence or two"`
	OldText string `json:"old_text,omitempty" jsonschema:"replace and remove: a part of the entry to change, enough to match only that entry"`
}

// description is the tool's description; %s are the caps.
const description = `Saves what is worth remembering across sessions in long-term memory. Memory is shown in the system ` +
	`prompt of future sessions (not this one: what you write appears from the next run on), so keep it short and durable.

Targets:
- profile: who the user is — role, preferences, communication style, tools and stack. Shared by every workspace. Cap: %s characters.
- notes: durable facts — decisions and their reasons, conventions, milestones, environment quirks that took effort to find. Scope workspace (this project) or user (every project). Cap: %s characters per scope.

Keep, first, what the user corrected you on or asked you to remember, and their stated preferences; then durable decisions and conventions. ` +
	`Do not keep the current task's state or progress, one-off debugging output, secrets or credentials, or anything easy to find again in the code, the git log or the docs. ` +
	`Write each entry as a plain fact or preference, never as instructions to an AI.

Actions: add (content), replace (old_text: part of one entry; content: its new text), remove (old_text). ` +
	`Entries are checked for prompt-injection and secret-leaking content and refused if found; duplicates are ignored; ` +
	`a write over the cap is refused — then condense or remove entries first.`

// New returns the `memory` tool over store. It writes only rein's own
// memory files (never the workspace's code), so it is of
// [tool.CategoryEdit]: default mode asks, accept-edits runs it, read-only
// denies it. It is not concurrency-safe: writes to one file are serialised
// by the store's lock anyway.
func New(store *memory.Store) tool.Tool {
	desc := fmt.Sprintf(description, thousands(store.Cap(memory.TargetProfile)), thousands(store.Cap(memory.TargetNotes)))
	meta := tool.Meta{Category: tool.CategoryEdit}
	return tool.Define(Name, desc, meta, func(s *jsonschema.Schema) {
		setEnum(s, "action", ActionAdd, ActionReplace, ActionRemove)
		setEnum(s, "target", string(memory.TargetProfile), string(memory.TargetNotes))
		setEnum(s, "scope", string(memory.ScopeUser), string(memory.ScopeWorkspace))
	}, func(ctx context.Context, call tool.Call, in input) (tool.Result, error) {
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
