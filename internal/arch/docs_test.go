package arch

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The documents this file keeps in step with the code: the requirements
// index (every requirement ID cited anywhere resolves to a row of it) and
// the architecture page (its arrows table is the arrows map of
// arch_test.go; every package, file and link it names exists).
const (
	indexDoc = "docs/requirements.md"
	archDoc  = "docs/architecture.md"
)

// citeRE finds what looks like a requirement ID: capitals, a hyphen, a
// number (LOOP-5, PERM-5, API-10). It must not follow a letter, a digit,
// an underscore or a hyphen, so the tail of a longer token is not read as
// one (the test fixture "REIN-CONFINE-SECRET-42" cites nothing).
var citeRE = regexp.MustCompile(`(?:^|[^A-Za-z0-9_-])([A-Z]+-[0-9]+)\b`)

// idRE is a well-formed requirement ID: an area in capitals and a number
// from 1, without leading zeros.
var idRE = regexp.MustCompile(`^[A-Z]+-[1-9][0-9]*$`)

// notRequirements are the tokens citeRE finds that are not requirement
// IDs. Each says what it is; a new one needs a line here, so a mistyped
// citation (a letter or a digit too many) is never mistaken for one of these.
var notRequirements = map[string]string{
	"UTF-8":    "the text encoding",
	"UTF-16":   "the encoding whose code units Slack and Telegram count",
	"SHA-256":  "the hash function",
	"AES-256":  "the cipher of Feishu's encrypted events (AES-256-CBC)",
	"CVE-2021": "the head of CVE-2021-42574 (Trojan Source), cited by memory's scanner corpus",
	"GPT-5":    "OpenAI's model family, in the registry and a suggest test",
	"PDF-1":    "the head of a PDF file's magic, %PDF-1.4, in a gateway test",
	"SEP-2322": "an MCP specification enhancement proposal (multi round-trip requests), cited by mcpserver",
}

// cite is one occurrence of a requirement ID.
type cite struct {
	id   string
	file string // relative to the module
	line int
}

func (c cite) String() string { return fmt.Sprintf("%s:%d", c.file, c.line) }

// citations returns the requirement IDs text cites, with their lines,
// leaving out notRequirements.
func citations(file, text string) []cite {
	var out []cite
	for i, line := range strings.Split(text, "\n") {
		for _, m := range citeRE.FindAllStringSubmatch(line, -1) {
			if _, skip := notRequirements[m[1]]; !skip {
				out = append(out, cite{id: m[1], file: file, line: i + 1})
			}
		}
	}
	return out
}

// moduleRoot is the directory of the module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// readDoc reads a file of the module by its relative path.
func readDoc(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return string(b)
}

// sources returns the module's files that cite requirements: every .go
// file (hidden directories and testdata left out: they are not the
// module's code), the pages of docs/ and the README.
func sources(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(rel, ".go"),
			strings.HasPrefix(rel, "docs/") && strings.HasSuffix(rel, ".md") && !strings.Contains(strings.TrimPrefix(rel, "docs/"), "/"),
			rel == "README.md":
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking the module: %v", err)
	}
	sort.Strings(files)
	return files
}

// indexRow is one entry of the requirements index.
type indexRow struct {
	id, statement, where string
	line                 int
}

// parseIndex reads the rows of the index's tables. Every table row other
// than a header or a separator must be an entry: a well-formed ID, a
// statement and where it lives. Problems come back as messages naming the
// line.
func parseIndex(file, text string) (map[string]indexRow, []string) {
	rows := map[string]indexRow{}
	var errs []string
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := tableCells(line)
		if isSeparator(cells) || len(cells) > 0 && cells[0] == "ID" {
			continue
		}
		if len(cells) != 3 {
			errs = append(errs, fmt.Sprintf("%s:%d: an entry has 3 cells (| ID | Requirement | Where |), this row has %d: %q", file, n, len(cells), line))
			continue
		}
		r := indexRow{id: cells[0], statement: cells[1], where: cells[2], line: n}
		switch {
		case !idRE.MatchString(r.id):
			errs = append(errs, fmt.Sprintf("%s:%d: %q is not a well-formed requirement ID (capitals, a hyphen, a number from 1: LOOP-5)", file, n, r.id))
			continue
		case rows[r.id].line != 0:
			errs = append(errs, fmt.Sprintf("%s:%d: %s is listed again (first at line %d): keep one entry per ID", file, n, r.id, rows[r.id].line))
			continue
		case r.statement == "":
			errs = append(errs, fmt.Sprintf("%s:%d: %s has no statement: say in a sentence or three what it asks", file, n, r.id))
		case r.where == "":
			errs = append(errs, fmt.Sprintf("%s:%d: %s says nowhere where it lives: name the packages, or — when it is not built", file, n, r.id))
		}
		rows[r.id] = r
	}
	return rows, errs
}

// tableCells splits a Markdown table row into its trimmed cells.
func tableCells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	cells := strings.Split(line, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// isSeparator reports whether cells are a table's |---|---| line.
func isSeparator(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, "-: ") != "" || c == "" {
			return false
		}
	}
	return len(cells) > 0
}

// TestRequirementsIndex checks docs/requirements.md: its entries are
// well-formed and unique, and every requirement ID cited in a Go file, a
// page of docs/ or the README has an entry.
func TestRequirementsIndex(t *testing.T) {
	root := moduleRoot(t)
	rows, errs := parseIndex(indexDoc, readDoc(t, root, indexDoc))
	for _, e := range errs {
		t.Error(e)
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no entries", indexDoc)
	}
	missing := map[string][]cite{}
	cited, inGo := map[string]bool{}, map[string]bool{}
	for _, f := range sources(t, root) {
		for _, c := range citations(f, readDoc(t, root, f)) {
			cited[c.id] = true
			if strings.HasSuffix(f, ".go") {
				inGo[c.id] = true
			}
			if _, ok := rows[c.id]; !ok && !slices.Contains(missing[c.id], c) {
				missing[c.id] = append(missing[c.id], c)
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(missing)) {
		at := missing[id]
		where := make([]string, 0, 3)
		for _, c := range at[:min(3, len(at))] {
			where = append(where, c.String())
		}
		more := ""
		if len(at) > 3 {
			more = fmt.Sprintf(" and %d more", len(at)-3)
		}
		t.Errorf("%s is cited at %s%s but has no entry in %s: add one (ID, what it asks in our words, where it lives), "+
			"fix the citation if it is a typo, or, if it is not a requirement at all, add it to notRequirements in internal/arch/docs_test.go",
			id, strings.Join(where, ", "), more, indexDoc)
	}
	t.Logf("%d requirement IDs cited (%d of them in Go files), %d entries in %s", len(cited), len(inGo), len(rows), indexDoc)
}

// docPackageRE is a package path written in backticks: lowercase path
// elements, a trailing slash allowed (`runner/`, `session/sqlite`).
var docPackageRE = regexp.MustCompile("`([a-z][a-z0-9]*(?:/[a-z][a-z0-9]*)*)/?`")

// docFileRE is a file of the repository written in backticks
// (`runner/queue/doc.go`, `docs/queue.md`).
var docFileRE = regexp.MustCompile("`([a-z][a-z0-9_]*(?:/[A-Za-z0-9_.-]+)+\\.[a-z]+)`")

// docLinkRE is a Markdown link; its target is checked when it is relative.
var docLinkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// checkNames returns the problems of the packages, files and links that
// the page file names: a package path in backticks must be a package of
// the module (pkgs), a file in backticks must exist (exists, relative to
// the module), and a relative link must reach a file, and a heading of it
// when it has an anchor (anchors: a page's headings as GitHub links them).
func checkNames(file, text string, pkgs map[string]pkg, exists func(string) bool, anchors func(string) map[string]bool) []string {
	var errs []string
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		for _, m := range docPackageRE.FindAllStringSubmatch(line, -1) {
			if !own(pkgs, m[1]) {
				errs = append(errs, fmt.Sprintf("%s:%d: `%s` names no package of the module (go list ./...): fix the path, "+
					"or write it without backticks if it is not a package", file, n, m[1]))
			}
		}
		for _, m := range docFileRE.FindAllStringSubmatch(line, -1) {
			if !exists(m[1]) {
				errs = append(errs, fmt.Sprintf("%s:%d: `%s` names a file the repository does not have", file, n, m[1]))
			}
		}
		for _, m := range docLinkRE.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			page := file
			if path != "" {
				page = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
				if !exists(page) {
					errs = append(errs, fmt.Sprintf("%s:%d: the link to %s leads nowhere: %s does not exist", file, n, target, page))
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(page, ".md") && !anchors(page)[anchor] {
				errs = append(errs, fmt.Sprintf("%s:%d: the link to %s names no heading of %s", file, n, target, page))
			}
		}
	}
	return errs
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown page: lower case, spaces to hyphens, punctuation dropped.
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && r != '…' && r != '—':
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

// TestDocsNameWhatExists checks that the architecture page and the
// requirements index name only packages, files and headings that exist.
func TestDocsNameWhatExists(t *testing.T) {
	root := moduleRoot(t)
	pkgs := modulePackages(t)
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
		return err == nil
	}
	anchors := func(rel string) map[string]bool {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil
		}
		return headingAnchors(string(b))
	}
	for _, doc := range []string{archDoc, indexDoc} {
		for _, e := range checkNames(doc, readDoc(t, root, doc), pkgs, exists, anchors) {
			t.Error(e)
		}
	}
}

// modulePackages returns the packages of the module, paths relative to
// it, as own expects them (without the dependencies packages walks).
func modulePackages(t *testing.T) map[string]pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-e", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	m := map[string]pkg{}
	for _, p := range strings.Fields(string(out)) {
		if p == module {
			p = "."
		}
		m[strings.TrimPrefix(p, module+"/")] = pkg{}
	}
	return m
}

// arrowsTable reads the table between the arrows:begin and arrows:end
// markers of the architecture page: package → what it may reach, with
// the line of each row.
func arrowsTable(file, text string) (map[string][]string, map[string]int, []string) {
	table, lines := map[string][]string{}, map[string]int{}
	var errs []string
	in, seen := false, false
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		switch strings.TrimSpace(line) {
		case "<!-- arrows:begin -->":
			in, seen = true, true
			continue
		case "<!-- arrows:end -->":
			in = false
			continue
		}
		if !in || !strings.HasPrefix(strings.TrimSpace(line), "|") {
			continue
		}
		cells := tableCells(line)
		if isSeparator(cells) || len(cells) > 0 && cells[0] == "package" {
			continue
		}
		if len(cells) != 2 {
			errs = append(errs, fmt.Sprintf("%s:%d: an arrows row has 2 cells (| `pkg` | `dep`, `dep` |), this one has %d", file, n, len(cells)))
			continue
		}
		p := strings.Trim(cells[0], "`")
		if lines[p] != 0 {
			errs = append(errs, fmt.Sprintf("%s:%d: %s has a row already (line %d)", file, n, p, lines[p]))
			continue
		}
		deps := []string{}
		if cells[1] != "—" && cells[1] != "" {
			for _, d := range strings.Split(cells[1], ",") {
				deps = append(deps, strings.Trim(strings.TrimSpace(d), "`"))
			}
		}
		table[p], lines[p] = deps, n
	}
	if !seen {
		errs = append(errs, fmt.Sprintf("%s: no <!-- arrows:begin --> marker: the arrows table must sit between the markers", file))
	}
	return table, lines, errs
}

// compareArrows returns how the page's table differs from the map.
func compareArrows(file string, table map[string][]string, lines map[string]int, want map[string][]string) []string {
	var errs []string
	for _, p := range slices.Sorted(maps.Keys(want)) {
		got, ok := table[p]
		if !ok {
			errs = append(errs, fmt.Sprintf("%s: no row for %s, which arch_test.go's arrows has (%s → %s): add it", file, p, p, orNone(want[p])))
			continue
		}
		if a, b := sortedCopy(got), sortedCopy(want[p]); !slices.Equal(a, b) {
			errs = append(errs, fmt.Sprintf("%s:%d: %s may reach %s on the page but %s in arch_test.go's arrows: make them agree",
				file, lines[p], p, orNone(a), orNone(b)))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(table)) {
		if _, ok := want[p]; !ok {
			errs = append(errs, fmt.Sprintf("%s:%d: the row of %s has no entry in arch_test.go's arrows: add it there (the test checks it) or drop the row",
				file, lines[p], p))
		}
	}
	return errs
}

// TestArchitectureArrows checks that the arrows table of the architecture
// page is the arrows map the layout test enforces, row for row.
func TestArchitectureArrows(t *testing.T) {
	root := moduleRoot(t)
	table, lines, errs := arrowsTable(archDoc, readDoc(t, root, archDoc))
	errs = append(errs, compareArrows(archDoc, table, lines, arrows)...)
	for _, e := range errs {
		t.Error(e)
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, ", ")
}
