package tool

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// DefaultSensitiveFiles are the files no tool may read or change unless a
// settings layer makes an exception (`!.env.example`): the permission
// policy denies calls naming them, and the search tools (grep, glob) leave
// them out of their results. A pattern without a slash matches a file name
// at any depth; one with a slash matches a path ending so; one starting
// with / or ~/ an absolute path. A workspace's .rein/data (the history
// mirror, the knowledge base: rein's own data, which may hold other
// callers' conversations on a server) is one (SPEC API-9).
var DefaultSensitiveFiles = []string{
	".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*",
	".ssh", ".ssh/**", ".aws/credentials", ".netrc", "*.p12",
	".rein/data", ".rein/data/**",
}

// SensitiveSet matches paths against sensitive-file patterns (see
// [DefaultSensitiveFiles]); patterns starting with ! are exceptions. The
// zero value matches nothing.
type SensitiveSet struct {
	deny, except []sensitivePattern
}

// sensitivePattern is a name pattern (no slash: matched against the base
// name, which is what **/name means and much cheaper) or a doublestar glob
// over the slash path without its leading /.
type sensitivePattern struct {
	name, glob string
}

func (sp sensitivePattern) match(p string) bool {
	p = filepath.ToSlash(p)
	if sp.name != "" {
		ok, err := path.Match(sp.name, path.Base(p))
		return err == nil && ok
	}
	ok, err := doublestar.Match(sp.glob, strings.TrimPrefix(p, "/"))
	return err == nil && ok
}

// String returns the pattern as written (name) or as a glob.
func (sp sensitivePattern) String() string { return sp.name + sp.glob }

// NewSensitiveSet compiles patterns; those starting with ! are exceptions.
// A leading ~ is the home directory.
func NewSensitiveSet(patterns []string) SensitiveSet {
	var s SensitiveSet
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		if p == "" {
			continue
		}
		g := filepath.ToSlash(expandHome(p))
		var sp sensitivePattern
		switch {
		case strings.HasPrefix(g, "/"):
			sp.glob = strings.TrimPrefix(g, "/")
		case !strings.Contains(strings.TrimPrefix(g, "./"), "/") && !strings.Contains(g, "**"):
			sp.name = strings.TrimPrefix(g, "./")
		default:
			sp.glob = "**/" + strings.TrimPrefix(g, "./")
		}
		if neg {
			s.except = append(s.except, sp)
		} else {
			s.deny = append(s.deny, sp)
		}
	}
	return s
}

// Match reports whether a file is sensitive, given its absolute path as
// written and, optionally, with symlinks resolved: an exception matching
// any of them wins, else a pattern matching any of them. It returns the
// pattern that matched, without a leading **/.
func (s SensitiveSet) Match(abs ...string) (string, bool) {
	for _, sp := range s.except {
		for _, p := range abs {
			if sp.match(p) {
				return "", false
			}
		}
	}
	for _, sp := range s.deny {
		for _, p := range abs {
			if p != "" && sp.match(p) {
				return strings.TrimPrefix(sp.String(), "**/"), true
			}
		}
	}
	return "", false
}

// Empty reports a set that matches nothing.
func (s SensitiveSet) Empty() bool { return len(s.deny) == 0 }

// expandHome replaces a leading ~ with the user's home directory.
func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return p
	}
	return filepath.Join(home, p[1:])
}
