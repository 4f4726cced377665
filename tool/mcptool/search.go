package mcptool

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/reinhq/rein/tool"
)

// SearchToolName is the name of the tool that finds and loads deferred MCP
// tools.
const SearchToolName = "mcp_tool_search"

// The number of tools a keyword search loads: by default, and at most;
// the longest query, the most keywords, and the most notes (tools not
// loaded) a result lists.
const (
	defaultResults = 5
	maxResults     = 20
	maxQuery       = 4096
	maxWords       = 32
	maxNotes       = 10
)

// Search is the tool through which the model finds and loads MCP tools
// left out of its requests because they exceed the [Budget] (SPEC MCP-2):
// a keyword query loads the best matches, "select:a,b" loads tools by
// name. A loaded tool stays loaded for the tool set's life (the session)
// and counts toward the budget, which it never exceeds: a tool that does
// not fit is refused with a message saying so. Only the deferred tools it
// was built with can be loaded — never a built-in, never a withheld
// server's.
type Search struct {
	budget  Budget
	load    func(names ...string) error
	catalog []*Tool // sorted by name
	lower   []lowered
	servers []string

	mu     sync.Mutex
	loaded map[string]bool
	tools  int // loaded tools
	bytes  int // bytes of their definitions
}

// NewSearch returns the search tool over the deferred tools (those of
// [Manager.Tools] that are not *Tool are ignored); load makes named tools
// part of the model's requests ([tool.Set.Load]).
func NewSearch(deferred []tool.Tool, b Budget, load func(names ...string) error) *Search {
	s := &Search{budget: b.withDefaults(), load: load, loaded: map[string]bool{}}
	for _, t := range deferred {
		if mt, ok := t.(*Tool); ok {
			s.catalog = append(s.catalog, mt)
			if !slices.Contains(s.servers, mt.Server()) {
				s.servers = append(s.servers, mt.Server())
			}
		}
	}
	slices.SortFunc(s.catalog, func(a, b *Tool) int { return cmp.Compare(a.spec.Name, b.spec.Name) })
	slices.Sort(s.servers)
	s.lower = make([]lowered, len(s.catalog))
	for i, t := range s.catalog {
		name := strings.ToLower(t.remote)
		s.lower[i] = lowered{name, strings.ToLower(t.Server()), strings.ToLower(t.spec.Description), strings.FieldsFunc(name, notWordRune)}
	}
	return s
}

// lowered is a tool's words in lower case, for the keyword search; tokens
// are the words of its name.
type lowered struct {
	name, server, desc string
	tokens             []string
}

// Hint is what the model is told when it calls a deferred tool before
// loading it.
func Hint(name string) string {
	return fmt.Sprintf("load it first: call %s with {\"query\": \"select:%s\"}, then call it in your next reply", SearchToolName, name)
}

// Tool returns the tool the model calls; its description says how many
// tools wait, from which servers, and how to load them.
func (s *Search) Tool() tool.Tool {
	desc := fmt.Sprintf("Find and load MCP tools. %d tools of the MCP servers %s are available but not loaded, "+
		"because together they exceed the budget of %s per request. "+
		"Search them by keywords (\"github issue\"): the best matches are loaded. "+
		"Or load tools by exact name: \"select:mcp__server__tool,mcp__server__other\". "+
		"The result gives each loaded tool's description and input schema; call the tools from your next reply. "+
		"Loaded tools stay loaded for the session; at most %d can be loaded at once.",
		len(s.catalog), strings.Join(s.servers, ", "), s.budget, s.budget.MaxTools)
	return tool.New(SearchToolName, desc, tool.Meta{Category: tool.CategorySession}, s.run)
}

// Size is the number of deferred tools the search covers.
func (s *Search) Size() int { return len(s.catalog) }

type searchInput struct {
	Query      string `json:"query" jsonschema:"keywords, or select: followed by exact tool names separated by commas"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"how many tools a keyword search loads (default 5, at most 20)"`
}

func (s *Search) run(_ context.Context, _ tool.Call, in searchInput) (tool.Result, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return tool.Errorf("the query is empty: give keywords, or select:NAME,NAME"), nil
	}
	if len(q) > maxQuery {
		return tool.Errorf("the query is %d bytes; at most %d: give a few keywords, or fewer names", len(q), maxQuery), nil
	}
	var picked []*Tool
	var notes []string
	if names, ok := strings.CutPrefix(q, "select:"); ok {
		picked, notes = s.selectNames(names)
	} else {
		n := in.MaxResults
		if n <= 0 {
			n = defaultResults
		}
		picked = s.match(q, min(n, maxResults))
		if len(picked) == 0 {
			return tool.Text(fmt.Sprintf("No MCP tool matches %q. Try other keywords; the servers are %s.",
				q, strings.Join(s.servers, ", "))), nil
		}
	}
	return s.loadAll(picked, notes), nil
}

// selectNames finds tools by exact name.
func (s *Search) selectNames(list string) (picked []*Tool, notes []string) {
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		i, found := slices.BinarySearchFunc(s.catalog, n, func(t *Tool, n string) int { return cmp.Compare(t.spec.Name, n) })
		if !found {
			notes = append(notes, fmt.Sprintf("%s: not a deferred MCP tool; only they can be loaded (names look like mcp__server__tool; built-in tools are always loaded)", n))
			continue
		}
		if !slices.Contains(picked, s.catalog[i]) {
			picked = append(picked, s.catalog[i])
		}
	}
	return picked, notes
}

// match returns the n tools that match the query's words best: a word
// that is the tool's name counts most; the words of its name count by the
// share of the name they cover (8 for all of it); then a part of its
// name, its server's name, its description; a tool every word of whose
// name the query holds gets a bonus, and ties go to the shorter name. So
// a server cannot win every search by stuffing its tools' names with words
// ("create_issue_github_pull_request_…" against github's create_issue:
// issue 22's second probes). A withheld server's tools never match.
func (s *Search) match(q string, n int) []*Tool {
	words := strings.FieldsFunc(strings.ToLower(q), notWordRune)
	words = words[:min(len(words), maxWords)]
	type scored struct {
		t      *Tool
		score  float64
		tokens int
	}
	var hits []scored
	withheld := map[*conn]bool{} // asked once per server and search
	for i, t := range s.catalog {
		name, server, desc, tokens := s.lower[i].name, s.lower[i].server, s.lower[i].desc, s.lower[i].tokens
		score, named := 0.0, 0
		for _, w := range words {
			switch {
			case name == w:
				score += 10
			case slices.Contains(tokens, w):
				named++
			case strings.Contains(name, w), strings.Contains(server, w):
				score += 2
			case strings.Contains(desc, w):
				score++
			}
		}
		if named > 0 {
			score += 8 * float64(min(named, len(tokens))) / float64(len(tokens))
		}
		if score > 0 && len(tokens) > 0 && !slices.ContainsFunc(tokens, func(tok string) bool { return !slices.Contains(words, tok) }) {
			score += 5 // the query names the tool: every word of its name
		}
		if score <= 0 {
			continue
		}
		w, ok := withheld[t.conn]
		if !ok {
			w = t.conn.withheld()
			withheld[t.conn] = w
		}
		if !w {
			hits = append(hits, scored{t, score, len(tokens)})
		}
	}
	slices.SortStableFunc(hits, func(a, b scored) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.tokens, b.tokens)) })
	out := make([]*Tool, 0, min(n, len(hits)))
	for _, h := range hits[:min(n, len(hits))] {
		out = append(out, h.t)
	}
	return out
}

// notWordRune separates the words of a query or a tool's name.
func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// loadAll loads the picked tools that fit the budget and describes them;
// notes are said first.
func (s *Search) loadAll(picked []*Tool, notes []string) tool.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	var fresh []string
	shown := 0
	for _, t := range picked {
		name := t.spec.Name
		size := SpecSize(t.spec)
		switch {
		case t.conn.withheld():
			notes = append(notes, fmt.Sprintf("%s: %s", name, t.conn.withheldMessage()))
			continue
		case s.loaded[name]:
		case s.tools+1 > s.budget.MaxTools || s.bytes+size > s.budget.MaxBytes:
			notes = append(notes, fmt.Sprintf("%s: not loaded: it would exceed the budget of %s per request (%d tools, %s loaded already); "+
				"use the tools loaded, or ask the user to raise mcp.max_tools / mcp.max_tool_bytes in their settings", name, s.budget, s.tools, kib(s.bytes)))
			continue
		default:
			fresh = append(fresh, name)
			s.loaded[name] = true
			s.tools++
			s.bytes += size
		}
		fmt.Fprintf(&b, "\n## %s\n%s\nInput schema: %s\n", name, t.spec.Description, t.spec.InputSchema)
		shown++
	}
	if len(fresh) > 0 {
		if err := s.load(fresh...); err != nil {
			for _, n := range fresh {
				delete(s.loaded, n)
			}
			return tool.Errorf("could not load the tools: %v", err)
		}
	}
	var out strings.Builder
	for i, n := range notes {
		if i == maxNotes {
			fmt.Fprintf(&out, "(and %d more not loaded)\n", len(notes)-maxNotes)
			break
		}
		out.WriteString(n + "\n")
	}
	if shown == 0 {
		return tool.Result{Content: tool.Text(strings.TrimSpace(out.String()) + "\nNo tool was loaded.").Content, IsError: true}
	}
	fmt.Fprintf(&out, "Loaded %d tool(s); call them from your next reply:\n%s", shown, b.String())
	return tool.Text(out.String())
}
