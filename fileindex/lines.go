package fileindex

import (
	"fmt"
	"strconv"
	"strings"
)

// Range is the lines a mention names, 1-based and inclusive; End is Start
// for one line.
type Range struct {
	Start, End int
}

// maxLine bounds a line number in a mention.
const maxLine = 10_000_000

// ParseRange splits a mention's path from the lines it names: "a.go#20-45",
// "a.go#L20-L45", "a.go#L7", "a.go#7". ok is false when there is no #
// suffix (the path is s itself); an error says what is wrong with one.
func ParseRange(s string) (file string, r Range, ok bool, err error) {
	i := strings.LastIndexByte(s, '#')
	if i < 0 {
		return s, Range{}, false, nil
	}
	file, spec := s[:i], s[i+1:]
	if file == "" {
		return s, Range{}, false, fmt.Errorf("%q: no file before the #", s)
	}
	from, to, dash := strings.Cut(spec, "-")
	start, err := lineNumber(from)
	if err != nil {
		return file, Range{}, false, fmt.Errorf("%q: %v; write lines as #20-45 or #L20", s, err)
	}
	end := start
	if dash {
		if end, err = lineNumber(to); err != nil {
			return file, Range{}, false, fmt.Errorf("%q: %v; write lines as #20-45 or #L20", s, err)
		}
	}
	if end < start {
		return file, Range{}, false, fmt.Errorf("%q: the range ends (%d) before it starts (%d)", s, end, start)
	}
	return file, Range{Start: start, End: end}, true, nil
}

// lineNumber reads "20" or "L20".
func lineNumber(s string) (int, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "L"), "l")
	if s == "" || len(s) > 8 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a line number", s)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxLine {
		return 0, fmt.Errorf("line %q is out of range (1 to %d)", s, maxLine)
	}
	return n, nil
}

// Lines returns lines r of text, each prefixed by its number, and whether
// the file has them all (a range past the end is cut).
func Lines(text string, r Range) (string, bool) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if r.Start > len(lines) {
		return "", false
	}
	end := min(r.End, len(lines))
	var b strings.Builder
	for n := r.Start; n <= end; n++ {
		fmt.Fprintf(&b, "%6d\t%s\n", n, lines[n-1])
	}
	return b.String(), end == r.End
}
