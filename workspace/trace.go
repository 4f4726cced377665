package workspace

import (
	"path/filepath"
	"strings"
	"sync"
)

// trace records what one [Load] depends on besides its options: every
// path it read, listed or looked for (found or not), each pattern it
// globbed, and every variable it read with its value. A [Cache] keeps a
// Load's result with the state of those paths and revalidates it from
// them. Every file-system access of Load goes through a trace (nil for
// a Load without a cache: its methods then do nothing).
type trace struct {
	mu    sync.Mutex
	paths map[string]bool
	// lookups are paths only resolved or looked for: a directory among
	// them was not listed.
	lookups map[string]bool
	globs   []string
	env     map[string]string
	// unsure is set when Load touched what the trace cannot revalidate:
	// a relative path (it depends on the working directory).
	unsure bool
}

// newTrace returns an empty trace.
func newTrace() *trace {
	return &trace{paths: map[string]bool{}, lookups: map[string]bool{}, env: map[string]string{}}
}

// add records paths Load read, listed or looked for.
func (t *trace) add(paths ...string) {
	if t != nil {
		t.record(t.paths, paths)
	}
}

// lookup records paths Load only resolved or looked for (a directory's
// links resolved, whether it exists): what a directory among them lists
// does not matter.
func (t *trace) lookup(paths ...string) {
	if t != nil {
		t.record(t.lookups, paths)
	}
}

// record adds paths to set.
func (t *trace) record(set map[string]bool, paths []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range paths {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			t.unsure = true
			continue
		}
		set[filepath.Clean(p)] = true
	}
}

// glob records a pattern passed to filepath.Glob: the directories its
// wildcards list are found again when the trace is snapshot.
func (t *trace) glob(pattern string) {
	if t == nil {
		return
	}
	if !strings.ContainsAny(pattern, `*?[\`) {
		t.add(pattern)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !filepath.IsAbs(pattern) {
		t.unsure = true
		return
	}
	t.globs = append(t.globs, pattern)
}

// getenv returns getenv recording each variable read with its value.
func (t *trace) getenv(getenv func(string) string) func(string) string {
	if t == nil {
		return getenv
	}
	return func(name string) string {
		v := getenv(name)
		t.mu.Lock()
		t.env[name] = v
		t.mu.Unlock()
		return v
	}
}
