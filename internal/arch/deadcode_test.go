package arch

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMethodsPruned keeps the Go linker's dead-code elimination of methods
// on for the rein binary (issue 9, start-up memory). When a function that
// calls reflect's Method or MethodByName with a name not known at compile
// time is reachable — text/template's field evaluation, go-cmp's type
// names — the linker must keep every exported method of every reachable
// type: rein grew from 89 to 141 MB and touched 11 MiB more at start-up.
// The linker marks such functions <ReflectMethod> in its -dumpdep output;
// this test fails when one is reachable and prints the chain of calls from
// the program's roots that reaches it, so the import that brought it in
// can be replaced.
func TestMethodsPruned(t *testing.T) {
	if testing.Short() {
		t.Skip("links the rein binary (about 20 s); run without -short")
	}
	bin := filepath.Join(t.TempDir(), "rein")
	cmd := exec.Command("go", "build", "-ldflags=-dumpdep", "-o", bin, module+"/cmd/rein")
	var dump bytes.Buffer
	cmd.Stderr = &dump
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build -ldflags=-dumpdep: %v\n%s", err, tail(dump.Bytes()))
	}
	edges, marked := readDumpdep(dump.Bytes())
	if len(edges) == 0 {
		t.Fatal("the linker printed no dependencies: has -dumpdep's output changed?")
	}
	// Once one is reachable, the linker keeps reflect's own iterators over
	// methods too, which it marks as well: name them only when nothing else
	// is marked.
	var cause []string
	for _, m := range marked {
		if !strings.HasPrefix(m, "reflect.") {
			cause = append(cause, m)
		}
	}
	if len(cause) > 0 {
		marked = cause
	}
	for _, m := range marked {
		t.Errorf("%s is reachable and disables method pruning; reached through:\n  %s",
			m, strings.Join(chain(edges, m), "\n  "))
	}
}

// readDumpdep reads the linker's "from -> to" lines into an edge list and
// the symbols it marked <ReflectMethod>.
func readDumpdep(out []byte) (map[string][]string, []string) {
	edges := map[string][]string{}
	seen := map[string]bool{}
	var marked []string
	mark := func(s string) string {
		if name, ok := strings.CutSuffix(s, " <ReflectMethod>"); ok {
			if !seen[name] {
				seen[name] = true
				marked = append(marked, name)
			}
			return name
		}
		return s
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		from, to, ok := strings.Cut(sc.Text(), " -> ")
		if !ok {
			continue
		}
		from = mark(strings.TrimSuffix(from, " <UsedInIface>"))
		to = mark(strings.TrimSuffix(to, " <UsedInIface>"))
		edges[from] = append(edges[from], to)
	}
	return edges, marked
}

// chain returns a shortest path to target from a root: main.main or a
// package's init task.
func chain(edges map[string][]string, target string) []string {
	prev := map[string]string{}
	var queue []string
	for from := range edges {
		if from == "main.main" || strings.HasSuffix(from, "..inittask") {
			prev[from] = ""
			queue = append(queue, from)
		}
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n == target {
			var path []string
			for ; n != ""; n = prev[n] {
				path = append([]string{n}, path...)
			}
			return path
		}
		for _, m := range edges[n] {
			if _, ok := prev[m]; !ok {
				prev[m] = n
				queue = append(queue, m)
			}
		}
	}
	return []string{"(no path from a root found)"}
}

// tail is the end of a long output, for a failure message.
func tail(b []byte) string {
	const n = 2000
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
