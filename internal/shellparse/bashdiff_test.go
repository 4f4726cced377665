//go:build linux || darwin

package shellparse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The differential test of PERM-6: real bash runs generated commands with
// PATH holding only recording shims, and every program bash ran must be
// one the analysis listed, unless the analysis refused the command or
// called it dynamic (the policy asks for both), or it does not parse.
//
// TestParseVsBash runs seeds and a few hundred generated commands on every
// `go test`; for longer runs:
//
//	go test -run '^$' -fuzz FuzzParseVsBash -fuzztime 10m ./internal/shellparse/
//
// A failing input lands in testdata/fuzz/FuzzParseVsBash and runs as a seed
// from then on; the seeds below each record a disagreement found so far.

// shimNames are programs that only record that they ran. None is a bash
// builtin, so bash runs them through PATH.
var shimNames = []string{"p1", "p2", "p3", "touch", "rmx"}

// realTools run other programs; they are linked into the PATH of the
// rig, so what they run is found among the shims.
var realTools = []string{"env", "xargs", "timeout", "nice", "nohup", "find", "sh", "bash"}

// bashRig runs commands with bash in a temporary directory.
type bashRig struct {
	bash, dir, bin string
	locale         string // LC_ALL of the commands run
	mu             sync.Mutex
	n              int
}

func newBashRig(tb testing.TB) *bashRig {
	tb.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		tb.Skip("bash is not installed: the differential test of PERM-6 needs it")
	}
	r := &bashRig{bash: bash, dir: tb.TempDir(), locale: "C.UTF-8"}
	r.bin = filepath.Join(r.dir, "bin")
	if err := os.Mkdir(r.bin, 0o755); err != nil {
		tb.Fatal(err)
	}
	shim := "#!/bin/sh\necho \"${0##*/}\" >> \"$SHIMLOG\"\n"
	for _, n := range shimNames {
		if err := os.WriteFile(filepath.Join(r.bin, n), []byte(shim), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	for _, n := range realTools {
		if p, err := exec.LookPath(n); err == nil {
			if err := os.Symlink(p, filepath.Join(r.bin, n)); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return r
}

// run runs src with `bash -c` and returns the shims that ran, in order.
func (r *bashRig) run(src string) ([]string, error) {
	r.mu.Lock()
	r.n++
	n := r.n
	r.mu.Unlock()
	work := filepath.Join(r.dir, fmt.Sprint("w", n))
	if err := os.Mkdir(work, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	log := filepath.Join(work, ".log")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bash, "-c", src)
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + r.bin, "HOME=" + work, "SHIMLOG=" + log, "LC_ALL=" + r.locale, "TERM=dumb"}
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard // Wait waits for background children holding them
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && ctx.Err() == nil {
		return nil, err
	}
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	var ran []string
	for _, n := range strings.Fields(string(b)) {
		if slices.Contains(shimNames, n) { // not a shim sourced by bash
			ran = append(ran, n)
		}
	}
	return ran, nil
}

// verdict is what the analysis made of a command, for the report.
type verdict int

const (
	vRefused verdict = iota
	vError
	vDynamic
	vListed
)

// checkBash runs src with bash when the analysis accepts it and reports a
// program bash ran that the analysis did not list.
func checkBash(t *testing.T, r *bashRig, src string) verdict {
	t.Helper()
	s, err := Parse(src)
	switch {
	case errors.Is(err, ErrRefused):
		return vRefused
	case err != nil:
		return vError
	case s.Dynamic != "":
		return vDynamic
	}
	ran, err := r.run(src)
	if err != nil {
		t.Errorf("bash -c %q: %v", src, err)
		return vListed
	}
	names := listed(s)
	for _, p := range ran {
		if !names[p] {
			t.Errorf("PERM-6: bash ran %s, which the analysis did not list (it listed %v) in\n%q", p, texts(s.Commands), src)
			break
		}
	}
	return vListed
}

// TestBashRig: the rig records what bash runs, through wrappers and
// nested shells too.
func TestBashRig(t *testing.T) {
	r := newBashRig(t)
	ran, err := r.run("p1; env p2 & wait; sh -c 'p3 | touch'; echo x | xargs rmx")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ran)
	if diff := cmp.Diff([]string{"p1", "p2", "p3", "rmx", "touch"}, ran); diff != "" {
		t.Errorf("ran -want +got:\n%s", diff)
	}
}

// gen makes commands from a corpus of tricky constructs.
type gen struct{ r *rand.Rand }

func (g *gen) pick(s []string) string { return s[g.r.IntN(len(s))] }

func (g *gen) prog() string { return g.pick(shimNames) }

// simple is a simple command, sometimes through a wrapper.
func (g *gen) simple() string {
	p := g.prog()
	args := g.pick([]string{"", " a", " -x b", ` "q r"`, " 'x;y'", ` \;`, " a#b", " #c", " $x", " ~", " >out", " 2>&1", " <<<w"})
	return strings.ReplaceAll(g.pick([]string{
		"P", "P", "P", "command P", "env A=1 P", "timeout 5 P", "nice P", "nohup P", "exec P", "xargs P </dev/null",
		"find . -maxdepth 0 -exec P {} \\;", "A=1 P", "time P", "! P", "$'P'", `"P"`, `\P`, "'P'",
	}), "P", p) + args
}

// cmd is a command of up to d levels of nesting.
func (g *gen) cmd(d int) string {
	if d <= 0 {
		return g.simple()
	}
	c := func() string { return g.cmd(d - 1) }
	fill := func(tmpl string) string {
		parts := strings.Split(tmpl, "C")
		for i := 1; i < len(parts); i++ {
			parts[i] = c() + parts[i]
		}
		return strings.Join(parts, "")
	}
	switch g.r.IntN(14) {
	case 0, 1:
		return g.simple()
	case 2:
		return c() + g.pick([]string{";", " ; ", "&&", " || ", "|", " & ", "\n", "|&", " ;\n"}) + c()
	case 3:
		return fill(g.pick([]string{"( C )", "{ C; }", "echo $(C)", "echo `C`", `echo "a$(C)b"`, "p1 <(C)", ": >(C)", "x=$(C)", ": ${x:-$(C)}", "a=( $(C) )", "[[ -n $(C) ]]"}))
	case 4:
		return fill(g.pick([]string{"if C; then C; fi", "if false; then :; else C; fi", "while false; do C; done", "for i in 1; do C; done",
			"until true; do :; done; C", "case a in a) C;; esac", "case a in (a) C;; b) C;; esac", "select i in; do C; done"}))
	case 5:
		return fill(g.pick([]string{"f() { C; }; f", "function g { C; }; g", "h() ( C ); h"}))
	case 6:
		return fill(g.pick([]string{": <<E\n$(C)\nE\n", ": <<'E'\nC\nE\nC", "cat <<-E\n\t$(C)\n\tE\n", ": <<E; C\nbody\nE\n"}))
	case 7:
		return "sh -c " + squote(c())
	case 8:
		return g.pick([]string{"bash -c ", "eval "}) + dquote(c())
	case 9:
		return c() + fill(g.pick([]string{" # C", " #C", "# C\nC", " #\\\nC", "\\\n; C"}))
	case 10:
		return fill(g.pick([]string{": $((1+2)); C", "echo {a,b}; C", "[[ a == a ]] && C", "(( 1 )) && C", "x=1; C", "shopt -s extglob\nC", "echo @(a|b); C"}))
	case 11:
		return fill(g.pick([]string{"trap C EXIT", "C &", "coproc C", "C; wait"}))
	}
	return c()
}

// trouble are strings inserted at random places: characters and tokens
// that bash and a parser may read differently.
var trouble = []string{"\r", "\r\n", "\n", "#", " #", "\\", "\\\n", "'", "\"", "`", "$(", ")", "(", ";", "&", "|", "\x00", "\v", "\f",
	"\x1b", "\x7f", "\x01", "\u00a0", "\u0085", "\u2028", "\ufeff", "\u202e", "{", "}", "((", "))", "<<E\n", "\nE\n", "$'", "!", "@(",
	"2>&1", ">out", "<<<x", ";;", " && ", " || ", "\t", " ", "$", "${", "[[", "]]", "=", "~", "*", "\\'", "\xff"}

// next returns a generated command, sometimes with trouble inserted.
func (g *gen) next() string {
	s := g.cmd(1 + g.r.IntN(3))
	for range g.r.IntN(3) {
		i := g.r.IntN(len(s) + 1)
		s = s[:i] + g.pick(trouble) + s[i:]
	}
	return s
}

func squote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func dquote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
	return `"` + r.Replace(s) + `"`
}

// bashSeeds are commands on which bash and a naive analysis disagree.
var bashSeeds = []string{
	"echo hi\r# ; touch x",
	"p1 #\\\np2",
	"p1 \\\n# c\np2",
	"p1 <<'E'\nx\\\nE\np2\n",
	"echo $(cat <<E\n)\nE\n); p1",
	"p1 `# x \\\np2`",
	"sh -c 'p1 #\\\np2'",
	"p1\x0bp2",
	"p1\u00a0; p2",
	"case a in a) p1 ;; # x \\\n esac; p2",
	"p1 & p2",
	"f() { p1; }; f",
	"echo $((1)); p1 | p2",
	"bash -c -- 'p1'",
	"bash -c -x 'p1'",
	"sh -c -e p1",
	"bash -c -o pipefail 'p1'",
	"bash -xc -- p1",
	"bash --rcfile x -c p1",
	"bash -c -- -- p1",
	"sh +c 'p1; p2'", "bash +ec 'p1; p2'", "echo p1 | bash +s",
	"env -S'p1 x'", "env -iS'p2 x'", "env -S 'p3 x'", "env --split-string='p1 x'", "env -u X -S'p1'",
	"eval -- p1",
	"echo $( # )\np1\n)",
	"echo $\\\n(p1)",
	"p1 <<E\nx\nE \np2\nE\np3",
	"p1 <<E\nx\n E\np2\nE\np3",
	"p1 <<-E\n\tx\n\tE\np2",
	"p1 <<-E\nx\n  E\np2\nE\n",
	"p1 <<E\nx\nE",
	"p1 <<E",
	"p1 <<E; p2\nx\nE\np3",
	"p1 <<E <<F\nx\nE\ny\nF\np2",
	"p1 <<'E\"'\nx\nE\"\np2",
	"p1 << E\nx\nE\np2",
	"p1 <<\"\"\nx\n\np2",
	"echo $(p1 <<E\nx\nE\n)",
	"p1 <<E\n$(p2\nE\n)\nE",
	"p1 <<E\n`p2\nE\n`\nE",
	"bash <<'E'\np1 #\\\np2\nE",
	"sh <<E\np1 \\\np2\nE",
	"p1#x; p2",
	"echo ${x#}; p1",
	"case x in #c\n x) p1;; esac",
	"p1 \\",
	"!p1; p2",
	"coproc X { p1; }; wait",
	"((p1); p2)",
	"echo $((p1); (p2))",
	"f() { p1; }; export -f f; bash -c f",
	"command_not_found_handle() { p1; }; nosuch",
	"p1 &>out; p2 >&out",
	"exec 3< <(p1); p2",
	"x=y; echo ${x/$(p1)/z}",
	"p1\u2028; p2", "p1\u3000; p2", "\ufeffp1; p2", "p1\u200b; p2", "p1\u2003p2; p3",
	"!(p1); p2", "echo @(p1); p2", "shopt -s extglob; echo @(p1|p2); p3",
	"echo $(case x in x) p1;; esac); p2", "'if' p1; p2", "exec -c p1", "command -p p1", "echo a | xargs -i p1 {}",
	"p1 <<E\\\nF\nx\nEF\np2", "coproc A=1 p3; wait", "coproc A=1 B=2 p3; wait", " coproc p1p1xa= p3", "[[ -n \\\n$(p1) ]]; p2", "echo $((\\\n1)); p1",
}

// TestParseVsBash is the differential test of PERM-6, seeded: a few hundred
// commands, each run by bash when the analysis accepts it.
func TestParseVsBash(t *testing.T) {
	r := newBashRig(t)
	g := &gen{r: rand.New(rand.NewPCG(6, 2026))}
	srcs := slices.Clone(bashSeeds)
	n := 200
	if testing.Short() {
		n = 50
	}
	for range n {
		srcs = append(srcs, g.next())
	}
	var counts [4]int
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan string)
	for range 4 {
		wg.Go(func() {
			for src := range work {
				v := checkBash(t, r, src)
				mu.Lock()
				counts[v]++
				mu.Unlock()
			}
		})
	}
	for _, s := range srcs {
		work <- s
	}
	close(work)
	wg.Wait()
	t.Logf("%d commands: %d refused, %d did not parse, %d dynamic, %d run by bash and checked",
		len(srcs), counts[vRefused], counts[vError], counts[vDynamic], counts[vListed])
	// In the C locale bash reads bytes, not characters.
	c := &bashRig{bash: r.bash, dir: r.dir, bin: r.bin, locale: "C", n: 1 << 20}
	for _, src := range bashSeeds {
		if strings.IndexFunc(src, func(r rune) bool { return r >= 0x80 }) >= 0 {
			checkBash(t, c, src)
		}
	}
}

// FuzzParseVsBash is the differential test of PERM-6 for `go test -fuzz`.
func FuzzParseVsBash(f *testing.F) {
	r := newBashRig(f)
	for _, s := range bashSeeds { // TestParseVsBash covers the generated ones
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 || bytes.ContainsRune([]byte(src), 0) {
			return // bash -c cannot take a NUL; long inputs slow the fuzzer down
		}
		checkBash(t, r, src)
	})
}
