package mcptool

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// This file screens what a server puts in front of the model (SPEC MCP-2):
// its instructions, each tool's name and description and every text of
// each tool's input schema go through Options.Screen — the memory
// scanner's document rules, the same as AGENTS.md and skills (MEM-3), which
// the runner passes (runner.ScreenText): this package does not reach
// memory. A server with findings is withheld until the user accepts exactly
// what was flagged.

// Finding is one text of a server that the document rules flagged.
type Finding struct {
	// Tool is the tool's name on its server; empty for the server's
	// instructions.
	Tool string `json:"tool,omitempty"`
	// Where is the part of the definition: "name", "description", "instructions",
	// or "input schema <path>" (e.g. input schema properties.path.description).
	Where string `json:"where"`
	// Rule says what the scanner found, with an excerpt.
	Rule string `json:"rule"`
	// text is what was flagged, for the hash.
	text string
}

// String is the finding on one line: where it is and what rule matched.
func (f Finding) String() string {
	if f.Tool == "" {
		return fmt.Sprintf("the server's %s: %s", f.Where, f.Rule)
	}
	return fmt.Sprintf("tool %s, %s: %s", f.Tool, f.Where, f.Rule)
}

// Screening is the result of screening one server's offer.
type Screening struct {
	// Findings are the flagged texts, ordered by tool, then place.
	Findings []Finding `json:"findings,omitempty"`
	// Hash identifies what was flagged (the server's name and each flagged
	// text with its place); empty when nothing was. Accepting a server
	// records it: a flagged text that changes, or a new one, changes it.
	Hash string `json:"hash,omitempty"`
}

// Flagged reports whether anything was found.
func (s Screening) Flagged() bool { return len(s.Findings) > 0 }

// Explain is the findings on one line each, at most max of them (0: all),
// with a count of the others.
func (s Screening) Explain(limit int) string {
	fs := s.Findings
	var more int
	if limit > 0 && len(fs) > limit {
		fs, more = fs[:limit], len(fs)-limit
	}
	parts := make([]string, 0, len(fs)+1)
	for _, f := range fs {
		parts = append(parts, f.String())
	}
	if more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, "; ")
}

// screen scans what a server offers the model: its instructions, and for
// each tool its name (separators read as spaces), the description and the
// input schema the model is given.
func screen(server, instructions string, tools []*Tool, scan func(string) string) Screening {
	if scan == nil {
		return Screening{}
	}
	var out []Finding
	add := func(toolName, where, text string) {
		if strings.TrimSpace(text) == "" {
			return
		}
		if rule := scan(text); rule != "" {
			out = append(out, Finding{Tool: toolName, Where: where, Rule: rule, text: text})
		}
	}
	add("", "instructions", instructions)
	for _, t := range tools {
		add(t.remote, "name", strings.Map(func(r rune) rune {
			if r == '_' || r == '-' || r == '.' {
				return ' '
			}
			return r
		}, t.remote))
		add(t.remote, "description", t.spec.Description)
		for _, s := range schemaTexts(t.spec.InputSchema) {
			add(t.remote, "input schema "+s.path, s.text)
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Where, b.Where))
	})
	return Screening{Findings: out, Hash: screenHash(server, out)}
}

// screenHash hashes the server's name and each flagged text with its place.
func screenHash(server string, fs []Finding) string {
	if len(fs) == 0 {
		return ""
	}
	h := sha256.New()
	for _, s := range []string{"rein-mcp-screen-1", server} {
		h.Write([]byte(strconv.Itoa(len(s)) + ":" + s))
	}
	for _, f := range fs {
		for _, s := range []string{f.Tool, f.Where, f.text} {
			h.Write([]byte(strconv.Itoa(len(s)) + ":" + s))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// schemaText is one text of a schema and where it is.
type schemaText struct{ path, text string }

// schemaTexts returns every text of a JSON schema the model reads: each
// string value (descriptions, titles, defaults, enums, examples) and each
// key (property names), decoded, so that an
// escaped character (\u202e) is scanned as what it is.
func schemaTexts(raw json.RawMessage) []schemaText {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return []schemaText{{path: "(raw)", text: string(raw)}}
	}
	var out []schemaText
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case string:
			out = append(out, schemaText{path: cmp.Or(path, "(root)"), text: v})
		case []any:
			for i, x := range v {
				walk(join(path, strconv.Itoa(i)), x)
			}
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				p := join(path, k)
				out = append(out, schemaText{path: p + " (key)", text: k})
				walk(p, v[k])
			}
		}
	}
	walk("", v)
	return out
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// withheldMessage says why a server's tools cannot be called, for the
// model (the user reads the run's warning).
func (c *conn) withheldMessage() string {
	return fmt.Sprintf("the MCP server %q is withheld: its tool definitions look like a prompt injection and the user has not accepted them; do not retry", c.cfg.Name)
}
