package memory

import (
	"regexp"
	"sync"
)

// lazyRegexp is a regular expression compiled at its first use rather than
// when the package loads: every rein command links memory, and compiling
// the scanner's patterns at start-up cost each of them a megabyte and two
// milliseconds (issue 9). A pattern that does not compile panics at its
// first use; the scanner's tests use every one.
type lazyRegexp struct {
	re func() *regexp.Regexp
}

// lazyRE returns pattern as a lazyRegexp.
func lazyRE(pattern string) *lazyRegexp {
	return &lazyRegexp{re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })}
}

// MatchString is regexp.Regexp.MatchString.
func (l *lazyRegexp) MatchString(s string) bool { return l.re().MatchString(s) }

// FindString is regexp.Regexp.FindString.
func (l *lazyRegexp) FindString(s string) string { return l.re().FindString(s) }

// FindAllString is regexp.Regexp.FindAllString.
func (l *lazyRegexp) FindAllString(s string, n int) []string { return l.re().FindAllString(s, n) }

// FindAllStringIndex is regexp.Regexp.FindAllStringIndex.
func (l *lazyRegexp) FindAllStringIndex(s string, n int) [][]int {
	return l.re().FindAllStringIndex(s, n)
}
