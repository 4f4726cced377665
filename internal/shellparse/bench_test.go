package shellparse

import (
	"strings"
	"testing"
)

// typical is a compound command as models write them. The permission
// decision must stay under 100 µs for it (PERM-6), Parse well under.
const typical = `cd src && git diff --stat HEAD~1 | grep -v vendor > /tmp/x 2>&1; echo "done $(date)"`

// BenchmarkParse measures commands of ordinary use.
func BenchmarkParse(b *testing.B) {
	hdoc := "cat > main.go <<'EOF'\n" + strings.Repeat("func main() { fmt.Println(\"hello\", os.Args[1:]) } // x\n", 1200) + "EOF\ngo vet ./..."
	for _, c := range []struct{ name, src string }{
		{"typical", typical},
		{"nested", `sudo -u app bash -c 'for f in *.go; do gofmt -l "$f" || echo "bad $f"; done' && find . -name '*.o' -exec rm {} +`},
		{"heredoc-64KiB", hdoc},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.src)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(c.src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// worst are the costliest inputs Parse accepts, each of MaxSize: dense
// syntax (a node every byte or two), MaxCommands commands in a list or a
// pipeline, a script parsed twice (bash -c, MaxWork), nesting at the
// limits. What MaxCommands leaves of MaxSize is filled with words.
func worst() []struct{ name, src string } {
	fill := func(pre, unit, post string) string {
		return pre + strings.Repeat(unit, (MaxSize-len(pre)-len(post))/len(unit)) + post
	}
	many := func(sep string) string { return strings.Repeat("a"+sep, MaxCommands-2) + "echo" }
	deepPre := "echo " + strings.Repeat("$( ", 120) + strings.Repeat("( ", 80) // under both depth limits
	deepPost := strings.Repeat(" )", 80) + strings.Repeat(")", 120)
	return []struct{ name, src string }{
		{"statements", fill(many(";"), " a", "")},
		{"pipeline", fill(many("|"), " a", "")},
		{"words", fill("echo", " a", "")},
		{"redirections", fill("echo ", ">a ", "")},
		{"expansions", fill("echo ", `"$a"`, "")},
		{"arithmetic", fill("echo $((1", "+1", "))")},
		{"bash -c", fill("bash -c '"+many(";"), " a", "'")},
		{"deep", fill(deepPre+"echo a"+deepPost, " a", "")},
	}
}

// BenchmarkParseWorst measures the worst accepted inputs: the bound on
// the time the analysis takes (PERM-6).
func BenchmarkParseWorst(b *testing.B) {
	for _, c := range worst() {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.src)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(c.src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
