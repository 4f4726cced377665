package builtin

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/tool"
)

// FileTools returns read_file, write_file, edit_file and multi_edit sharing
// one backend and one tracker, so an edit sees the reads before it (SPEC
// TOOL-6). A nil tracker gets a fresh one. Build one set per session. At
// most one Fence bounds their paths (see [Fence]; the zero value without).
func FileTools(b exec.Backend, t *FileTracker, fence ...Fence) []tool.Tool {
	if t == nil {
		t = NewFileTracker()
	}
	var f Fence
	if len(fence) > 0 {
		f = fence[0]
	}
	b = fenced(b, f)
	return []tool.Tool{NewReadFile(b, t), NewWriteFile(b, t), NewEditFile(b, t), NewMultiEdit(b, t)}
}

// Metas of the tool families.
var (
	metaRead    = tool.Meta{ReadOnly: true, ConcurrencySafe: true, Category: tool.CategoryRead}
	metaEdit    = tool.Meta{Category: tool.CategoryEdit}
	metaNetwork = tool.Meta{ReadOnly: true, ConcurrencySafe: true, Category: tool.CategoryNetwork}
)

// prop returns the schema of a top-level property; it panics when absent.
func prop(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p, ok := s.Properties[name]
	if !ok {
		panic("no property " + name)
	}
	return p
}

// enum restricts a string property to values.
func enum(s *jsonschema.Schema, values ...string) {
	s.Enum = nil
	for _, v := range values {
		s.Enum = append(s.Enum, v)
	}
}

// minimum sets a number property's lower bound.
func minimum(s *jsonschema.Schema, v float64) { s.Minimum = &v }

// resolvePath makes p absolute against the call's working directory.
func resolvePath(call tool.Call, p string) string {
	if p == "" {
		p = "."
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	if call.WorkDir == "" {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return filepath.Join(call.WorkDir, p)
}

// displayPath shows abs relative to the working directory when it lies
// inside it, absolute otherwise.
func displayPath(call tool.Call, abs string) string {
	if call.WorkDir == "" {
		return abs
	}
	rel, err := filepath.Rel(call.WorkDir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return abs
	}
	return filepath.ToSlash(rel)
}

// countLines counts the lines of s: a final line without a newline counts,
// an empty string has none.
func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// cutLine shortens a line to at most max bytes on a rune boundary and says
// how long it was.
func cutLine(line string, max int) (string, bool) {
	if len(line) <= max {
		return line, false
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return line[:cut] + fmt.Sprintf("… [line cut: %d chars]", utf8.RuneCountInString(line)), true
}

// numbered formats one line the way `cat -n` does.
func numbered(b *strings.Builder, n int, line string) {
	fmt.Fprintf(b, "%6d\t%s\n", n, line)
}

// plural returns "1 line" or "2 lines".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
