package shellparse

import (
	"context"
	"errors"
	"path"
	"strings"
	"sync/atomic"
	"testing"
)

// PERM-6: input whose reading could differ between bash and the analysis
// is refused, with a message that says what is wrong and how to fix it.
func TestParseRefusesPERM6(t *testing.T) {
	cases := []struct {
		name, src string
		kind      Refusal
		off       int // -1: any
		msg       string
	}{
		// bash reads \r as a word character, the parser as a blank: the
		// finding of issue 8 (an allow rule for echo ran touch).
		{"carriage return before a comment", "echo hi\r# ; touch x", RefusedChar, 7, "carriage return (at byte 8)"},
		{"CRLF line ends", "ls\r\npwd\r\n", RefusedChar, 2, "\\r\\n"},
		{"carriage return in quotes", "echo 'a\rb'", RefusedChar, 7, "carriage return"},
		{"NUL", "ls\x00; rm x", RefusedChar, 2, "NUL"},
		{"vertical tab", "p1\vp2", RefusedChar, 2, "vertical tab"},
		{"form feed", "p1\fp2", RefusedChar, 2, "form feed"},
		{"escape", "echo \x1b[2J", RefusedChar, 5, "escape character"},
		{"DEL", "echo a\x7fb", RefusedChar, 6, "DEL"},
		{"bash's quoting marker CTLESC", "echo \x01a", RefusedChar, 5, "U+0001"},
		{"other C0", "echo \x1f", RefusedChar, 5, "U+001F"},
		{"C1 next line", "echo a\u0085rm", RefusedChar, 6, "U+0085"},
		{"C1 CSI", "echo \u009b2J", RefusedChar, 5, "U+009B"},
		{"right-to-left override", "echo \u202e fdp", RefusedChar, 5, "bidirectional"},
		{"isolate", "ls \u2066x\u2069", RefusedChar, 3, "U+2066"},
		{"in a here-document", "cat <<'EOF'\na\rb\nEOF", RefusedChar, 13, "carriage return"},
		{"in a nested script", "bash -c 'p1\r# ; p2'", RefusedChar, 11, "carriage return"},
		{"not UTF-8", "echo \xff", RefusedEncoding, 5, "not valid UTF-8 (byte 0xff"},
		{"truncated UTF-8", "echo \xe2\x80", RefusedEncoding, 5, "UTF-8"},
		{"surrogate", "echo \xed\xa0\x80", RefusedEncoding, 5, "UTF-8"},
		// bash ends a comment at the line break; the parser joins a
		// backslash-newline to it and reads `p1 p2`, missing p2.
		{"comment ending in a backslash", "p1 #\\\np2", RefusedComment, 3, "remove the backslash"},
		{"comment in a substitution", "p1 $(# c \\\np2\n)", RefusedComment, 5, "comment"},
		{"comment in backquotes", "p1 `# c \\\np2`", RefusedComment, -1, "comment"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse(c.src)
			var re *RefusedError
			if !errors.As(err, &re) || !errors.Is(err, ErrRefused) {
				t.Fatalf("Parse(%q) = %v, %v; want a refusal", c.src, s, err)
			}
			if re.Kind != c.kind || c.off >= 0 && re.Offset != c.off {
				t.Errorf("Parse(%q): kind %d at %d, want %d at %d", c.src, re.Kind, re.Offset, c.kind, c.off)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("Parse(%q): %q does not say %q", c.src, err, c.msg)
			}
		})
	}
}

// PERM-6: what bash and the parser read alike is not refused: Unicode
// spaces are word characters to both, a backslash at the end of a line
// inside a here-document or a string is no comment.
func TestParseAcceptsPERM6(t *testing.T) {
	cases := []struct{ src, want string }{
		{"p1\u00a0-x; p2", "p1\u00a0-x|p2"},
		{"echo \u2028 \ufeff \u200b \u3000 \u061c", "echo \u2028 \ufeff \u200b \u3000 \u061c"},
		{"echo 'é ü 中文 😀'", "echo é ü 中文 😀"},
		{"cat > x.h <<'EOF'\n#define X \\\n  1\nEOF\nls", "cat|ls"},
		{"echo '# a \\\n' && ls", "echo # a \\\n|ls"},
		{"echo a\\#b # plain comment\nls", "echo a#b|ls"},
		{"ls \\\n  -l # comment\n", "ls -l"},
		{"echo\t'tab'", "echo tab"},
	}
	for _, c := range cases {
		s, err := Parse(c.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.src, err)
			continue
		}
		if got := strings.Join(texts(s.Commands), "|"); got != c.want {
			t.Errorf("Parse(%q) = %q, want %q", c.src, got, c.want)
		}
	}
	if _, err := Parse("echo 'unterminated"); err == nil || errors.Is(err, ErrRefused) {
		t.Errorf("a syntax error: %v, want an error that is not a refusal", err)
	}
}

// PERM-6: a nested script bash and the parser could read differently makes
// the whole one dynamic, and its rough split still shows what it runs.
func TestParseNestedRefusedPERM6(t *testing.T) {
	for _, src := range []string{
		"bash -c 'p1 #\\\np2'",
		"eval 'p1 #\\\np2'",
		"sh <<'EOF'\np1 #\\\np2\nEOF",
		"trap 'p1 #\\\np2' EXIT",
	} {
		s, err := Parse(src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", src, err)
		}
		if !strings.Contains(s.Dynamic, "cannot be analysed") {
			t.Errorf("Parse(%q): dynamic %q, want the nested refusal", src, s.Dynamic)
		}
		if !listed(s)["p2"] {
			t.Errorf("Parse(%q): p2 is not listed: %q", src, texts(s.Commands))
		}
	}
	// A nested script is checked like the command line: here a control
	// character comes from the home directory.
	t.Setenv("HOME", "/home/a\rb")
	s, err := Parse("bash -c ~/x")
	if err != nil || !strings.Contains(s.Dynamic, "carriage return") {
		t.Errorf("Parse(bash -c ~/x) with a carriage return in HOME: %v, %v", s, err)
	}
}

// PERM-6: the analysis is bounded in size, depth and work; past a limit it
// refuses, quickly and without exhausting the stack.
func TestParseLimitsPERM6(t *testing.T) {
	big := strings.Repeat("a;", 400_000)
	cases := []struct {
		name, src string
		kind      Refusal
	}{
		{"longer than MaxSize", strings.Repeat("a", MaxSize+1), RefusedSize},
		{"brackets over MaxNesting", "echo " + strings.Repeat("$(", MaxNesting+1), RefusedDepth},
		{"200000 command substitutions", "echo " + strings.Repeat("$(", 200_000) + strings.Repeat(")", 200_000), RefusedDepth},
		{"brackets in a string count", "echo '" + strings.Repeat("(", MaxNesting+1) + "'", RefusedDepth},
		{"unary arithmetic", "echo $((" + strings.Repeat("!", 900_000) + "1))", RefusedDepth},
		{"ternaries", "echo $((" + strings.Repeat("1?1:", 200_000) + "1))", RefusedDepth},
		{"nested if", strings.Repeat("if ", 300_000) + "a", RefusedDepth},
		{"time time", strings.Repeat("time ", 200_000) + "a", RefusedDepth},
		{"test negations", "[[ " + strings.Repeat("! ", 400_000) + "a ]]", RefusedDepth},
		{"test conjunctions", "[[ a" + strings.Repeat(" && a", 150_000) + " ]]", RefusedDepth},
		{"elif chain", "if a; then b;" + strings.Repeat(" elif a; then b;", 5000) + " fi", RefusedDepth},
		{"nested scripts over MaxWork", "bash -c 'bash -c \"" + big + "\"'", RefusedWork},
		{"words copying nested expansions", strings.Repeat(`x"$( `, 200) + strings.Repeat("a ", 100_000) + strings.Repeat(` )"`, 200), RefusedWork},
		{"over MaxCommands", strings.Repeat("a;", MaxCommands) + "a", RefusedWork},
		{"over MaxCommands with nested", "a;bash -c '" + strings.Repeat("a;", MaxCommands/2) + "';" + strings.Repeat("a;", MaxCommands/2), RefusedWork},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.src)
			var re *RefusedError
			if !errors.As(err, &re) || re.Kind != c.kind {
				t.Fatalf("Parse(%.40q…): %v, want refusal %d", c.src, err, c.kind)
			}
		})
	}
}

// PERM-6: long flat input up to the limits is analysed, without deep
// recursion: chains of pipes, lists and operators are walked flat.
func TestParseLongFlatPERM6(t *testing.T) {
	cases := []struct {
		name, src string
		cmds      int
	}{
		{"pipeline", "a" + strings.Repeat("|a", 30_000), 30_001},
		{"and list", "a" + strings.Repeat("&&a", 30_000), 30_001},
		{"arithmetic chain", "echo $((1" + strings.Repeat("+1", 30_000) + "))", 1},
		{"here-document of MaxSize", "cat >f <<'EOF'\n" + strings.Repeat("x", MaxSize-20) + "\nEOF", 1},
		{"brackets at MaxNesting", "echo " + strings.Repeat("{", MaxNesting) + strings.Repeat("}", MaxNesting), 1},
		{"nested script", "bash -c '" + strings.Repeat("a;", 20_000) + "'", 20_001},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := analyse(context.Background(), c.src)
			if err != nil {
				t.Fatalf("Parse(%.40q…): %v", c.src, err)
			}
			if len(p.s.Commands) != c.cmds {
				t.Errorf("%d commands, want %d", len(p.s.Commands), c.cmds)
			}
			if p.ticks > workBound(p.work) {
				t.Errorf("%d nodes walked for %d bytes parsed", p.ticks, p.work)
			}
		})
	}
}

// workBound is the most nodes the walk may visit for n bytes parsed: the
// walk is linear in the input.
func workBound(n int) int { return 8*n + 64 }

// countdown is a context that ends after n looks at it.
type countdown struct {
	context.Context
	n atomic.Int64
}

func (c *countdown) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// nestedBig runs a long script through bash -c: the parser reads it once
// in the command, once as a script.
var nestedBig = "bash -c '" + strings.Repeat("a;", 100_000) + "'"

// PERM-6: the analysis is cancellable, while the parser reads and while
// the tree is walked.
func TestParseContextCancelPERM6(t *testing.T) {
	cases := []struct {
		name, src string
		looks     int64
	}{
		{"before", "ls", 0},
		{"while parsing", strings.Repeat("a;", 100_000), 5},
		{"while walking", strings.Repeat("a;", 500), 2},
		{"in a nested script", nestedBig, int64(len(nestedBig)/1024 + 10)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := &countdown{Context: context.Background()}
			ctx.n.Store(c.looks)
			_, err := ParseContext(ctx, c.src)
			if !errors.Is(err, context.Canceled) || errors.Is(err, ErrRefused) {
				t.Fatalf("ParseContext: %v, want it canceled", err)
			}
			if ctx.n.Load() > 0 {
				t.Errorf("the context was looked at %d times, want %d", c.looks-ctx.n.Load(), c.looks+1)
			}
		})
	}
}

// listed returns the programs the analysis of s names: every static
// program of every variant, by base name.
func listed(s *Script) map[string]bool {
	out := map[string]bool{}
	for _, c := range s.Commands {
		for _, v := range c.Variants() {
			if v[0].Static {
				out[path.Base(v[0].Value)] = true
			}
		}
		if p := c.Program(); p != "" {
			out[p] = true
		}
		// A shell or source running a file, found through PATH: the
		// analysis names the file, not its contents.
		if ws, _ := c.Inner(); len(ws) > 1 && (IsShell(ws[0].Value) || ws[0].Value == "source" || ws[0].Value == ".") {
			for _, w := range ws[1:] {
				out[path.Base(w.Value)] = true
			}
		}
	}
	return out
}
