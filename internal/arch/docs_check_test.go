package arch

import (
	"strings"
	"testing"
)

// The checks of docs_test.go must fail when the documents drift: each row
// is a drift (or a hostile edit) and the message it must produce.
func TestDocCheckersCatchDrift(t *testing.T) {
	pkgs := map[string]pkg{"session": {}, "session/sqlite": {}, "runner": {}}
	files := map[string]bool{"docs/queue.md": true, "runner/doc.go": true, "docs/architecture.md": true}
	exists := func(rel string) bool { return files[rel] }
	anchors := func(rel string) map[string]bool {
		if rel == "docs/queue.md" {
			return headingAnchors("# The run queue\n## The model\n```\n# not a heading\n```\n## What a worker must do (API-5)\n")
		}
		return map[string]bool{"layers-and-arrows": true}
	}
	tests := []struct {
		name, check, text, want string
	}{
		{"malformed ID", "index", "| ID | Requirement | Where |\n|---|---|---|\n| loop-1 | x | `agent` |\n", `"loop-1" is not a well-formed`},
		// Spelt in two pieces so the index test does not read it as a citation.
		{"leading zero", "index", "| LOOP" + "-01 | x | `agent` |\n", `"LOOP` + `-01" is not a well-formed`},
		{"duplicate", "index", "| LOOP-1 | x | `agent` |\n| LOOP-1 | y | `agent` |\n", ":2: LOOP-1 is listed again (first at line 1)"},
		{"no statement", "index", "| LOOP-1 |  | `agent` |\n", ":1: LOOP-1 has no statement"},
		{"no where", "index", "| LOOP-1 | x |  |\n", ":1: LOOP-1 says nowhere"},
		{"missing cell", "index", "| LOOP-1 | x |\n", "this row has 2"},
		{"cell smuggled in", "index", "| LOOP-1 | x | y | z |\n", "this row has 4"},
		{"unknown package", "names", "see `sesion/sqlite`\n", ":1: `sesion/sqlite` names no package"},
		{"unknown package with slash", "names", "\n`runnr/`\n", ":2: `runnr` names no package"},
		{"missing file", "names", "in `runner/engine.go`\n", "`runner/engine.go` names a file the repository does not have"},
		{"dead link", "names", "[q](quue.md)\n", "the link to quue.md leads nowhere"},
		{"dead anchor", "names", "[q](queue.md#the-modle)\n", "the link to queue.md#the-modle names no heading of docs/queue.md"},
		{"heading inside a fence", "names", "[q](queue.md#not-a-heading)\n", "names no heading"},
		{"dead self anchor", "names", "[x](#layers)\n", "names no heading of docs/architecture.md"},
		{"arrows row missing", "arrows", "<!-- arrows:begin -->\n| `session` | — |\n<!-- arrows:end -->\n", "no row for runner"},
		{"arrows differ", "arrows", "<!-- arrows:begin -->\n| `session` | `runner` |\n| `runner` | `session` |\n<!-- arrows:end -->\n", ":2: session may reach runner on the page but nothing"},
		{"arrows extra row", "arrows", "<!-- arrows:begin -->\n| `session` | — |\n| `runner` | `session` |\n| `kb` | — |\n<!-- arrows:end -->\n", ":4: the row of kb has no entry"},
		{"arrows without markers", "arrows", "| `session` | — |\n", "no <!-- arrows:begin --> marker"},
		{"arrows twice", "arrows", "<!-- arrows:begin -->\n| `session` | — |\n| `session` | — |\n| `runner` | `session` |\n<!-- arrows:end -->\n", ":3: session has a row already"},
	}
	want := map[string][]string{"session": {}, "runner": {"session"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errs []string
			switch tt.check {
			case "index":
				_, errs = parseIndex("docs/requirements.md", tt.text)
			case "names":
				errs = checkNames("docs/architecture.md", tt.text, pkgs, exists, anchors)
			case "arrows":
				table, lines, e := arrowsTable("docs/architecture.md", tt.text)
				errs = append(e, compareArrows("docs/architecture.md", table, lines, want)...)
			}
			if !strings.Contains(strings.Join(errs, "\n"), tt.want) {
				t.Errorf("errors %q do not say %q", errs, tt.want)
			}
		})
	}
}

// Well-formed documents pass the same checks.
func TestDocCheckersAcceptGoodDocs(t *testing.T) {
	_, errs := parseIndex("i.md", "| ID | Requirement | Where |\n|---|---|---|\n| LOOP-1 | A run is a stream. | `agent` |\n| API-10 | Not built. | — |\n")
	if len(errs) != 0 {
		t.Errorf("good index: %q", errs)
	}
	pkgs := map[string]pkg{"session": {}, "session/sqlite": {}}
	errs = checkNames("docs/a.md", "`session/sqlite`, `session/`, `.rein/x.db`, `rein serve`, `run_start`, [x](https://example.com/a.md), [q](q.md#the-model)\n",
		pkgs, func(rel string) bool { return rel == "docs/q.md" }, func(string) map[string]bool { return headingAnchors("## The model\n") })
	if len(errs) != 0 {
		t.Errorf("good page: %q", errs)
	}
}

// What citations reads as a requirement ID, and what it does not.
func TestCitations(t *testing.T) {
	text := "SPEC LOOP-5, (PERM-5) and API-10: see CTX-1 … CTX-6\n" +
		"UTF-8 text, SHA-256 sums, REIN-CONFINE-SECRET-42, [A-Z0-9], X-Rein-Signature, CVE-2021-42574, GPT-5.1, LOOP-5x\n"
	var got []string
	for _, c := range citations("f.go", text) {
		got = append(got, c.id+"@"+c.String())
	}
	want := "LOOP-5@f.go:1 PERM-5@f.go:1 API-10@f.go:1 CTX-1@f.go:1 CTX-6@f.go:1"
	if strings.Join(got, " ") != want {
		t.Errorf("citations = %q, want %q", strings.Join(got, " "), want)
	}
}

// The parsers of the documents take any text without panicking, and what
// they return holds what they promise.
func FuzzParseIndex(f *testing.F) {
	f.Add("| ID | Requirement | Where |\n|---|---|---|\n| LOOP-1 | x | `agent` |\n")
	f.Add("| LOOP-1 | x |\n||||\n|---|\n| - |")
	f.Fuzz(func(t *testing.T, text string) {
		rows, _ := parseIndex("f.md", text)
		for id, r := range rows {
			if !idRE.MatchString(id) || r.id != id || r.line < 1 {
				t.Fatalf("row %q: %+v", id, r)
			}
		}
		for _, c := range citations("f.go", text) {
			if _, skip := notRequirements[c.id]; skip || !strings.Contains(text, c.id) || c.line < 1 {
				t.Fatalf("citation %+v", c)
			}
		}
		table, lines, _ := arrowsTable("f.md", text)
		for p := range table {
			if lines[p] < 1 {
				t.Fatalf("row %q has no line", p)
			}
		}
		headingAnchors(text)
	})
}
