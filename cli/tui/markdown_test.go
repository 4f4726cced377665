package tui

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// renderPlain renders src without colours, width columns wide.
func renderPlain(src string, width int) string {
	md := markdown{plain: true}
	return md.render(src, width, true)
}

func TestMarkdownBlocks(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		width     int
		want      string
	}{
		{"headings", "# One\n\n## Two\n\n### Three\n\n#### Four\n\nSetext\n===", 80,
			"  # One\n\n  ## Two\n\n  ### Three\n\n  #### Four\n\n  # Setext"},
		{"long heading", "## a heading that is too long for the width", 24,
			"  ## a heading that is\n     too long for the\n     width"},
		{"paragraphs wrapped", "one two three four five six seven eight nine ten\n\nnext", 24,
			"  one two three four\n  five six seven eight\n  nine ten\n\n  next"},
		{"long word broken", "a https://example.com/a/very/long/path/that/does/not/fit b", 24,
			"  a\n  https://example.com/\n  a/very/long/path/tha\n  t/does/not/fit b"},
		{"inline", "a **b** *c* ***d*** `e  f` \\*g\\* &amp; &#35; h", 80,
			"  a b c d e  f *g* & # h"},
		{"breaks", "soft\nbreak, hard  \nbreak\\\nand backslash", 80,
			"  soft break, hard\n  break\n  and backslash"},
		{"links", "[docs](https://go.dev/doc) <https://go.dev> [https://x.io](https://x.io) ![logo](logo.png) [](https://empty.io)", 80,
			"  docs (https://go.dev/doc) https://go.dev https://x.io image: logo (logo.png)\n  https://empty.io"},
		{"bullets nested", "- a\n- b\n  - c\n    - d\n      - e\n- f", 80,
			"  • a\n  • b\n    ◦ c\n      ▪ d\n        • e\n  • f"},
		{"item wrapped", "- one two three four five six", 16,
			"  • one two\n    three four\n    five six"},
		{"numbered", "9. nine\n10. ten\n    more\n11) no", 80,
			"   9. nine\n  10. ten more\n\n  11) no"},
		{"loose list", "- a\n\n- b\n\n  second paragraph", 80,
			"  • a\n\n  • b\n\n    second paragraph"},
		{"tasks", "- [ ] todo\n- [x] done\n- [X]\tdone too\n- not [ ] a task\n\n1. [x] numbered", 80,
			"  [ ] todo\n  [✓] done\n  [✓] done too\n  • not [ ] a task\n\n  1. [✓] numbered"},
		{"quote", "> quoted **text**\n>\n> - item\n>\n> > nested", 80,
			"  │ quoted text\n  │\n  │ • item\n  │\n  │ │ nested"},
		{"fenced code", "```go\nfunc f() {\n\treturn\n\n}\n```", 80,
			"  ╭─ go\n  │ func f() {\n  │     return\n  │\n  │ }\n  ╰─"},
		{"indented code", "text\n\n    x := 1\n    y := 2", 80,
			"  text\n\n  ╭─\n  │ x := 1\n  │ y := 2\n  ╰─"},
		{"code wrapped", "```\n0123456789abcdefghijklmnopqrstuvwxyz\n```", 20,
			"  ╭─\n  │ 0123456789abcd\n  │ efghijklmnopqr\n  │ stuvwxyz\n  ╰─"},
		{"unclosed fence", "Run:\n\n```sh\ngo test", 80,
			"  Run:\n\n  ╭─ sh\n  │ go test\n  ╰─"},
		{"rule", "a\n\n---\n\nb", 20, "  a\n\n  ────────────────\n\n  b"},
		{"table", "| Name | Size | Notes |\n|:-----|-----:|:-----:|\n| a | 1 | x |\n| **bb** | 22 | `c\\|d` |\n| e \\| f |", 80,
			"  Name  │ Size │ Notes\n  ──────┼──────┼──────\n  a     │    1 │   x\n  bb    │   22 │  c|d\n  e | f │      │"},
		{"table after text", "Results:\n| a | b |\n|---|---|\n| 1 | 2 | 3 |", 80,
			"  Results:\n\n  a │ b\n  ──┼──\n  1 │ 2"},
		{"table shrunk", "| key | value |\n|---|---|\n| k | a long value that has to wrap |", 24,
			"  key │ value\n  ────┼───────────────\n  k   │ a long value\n      │ that has to\n      │ wrap"},
		{"table too wide", "| a | b | c | d | e | f |\n|---|---|---|---|---|---|\n| 1 | 2 | 3 | 4 | 5 | 6 |", 20,
			"  | a | b | c | d\n  | e | f |\n  |---|---|---|---\n  |---|---|\n  | 1 | 2 | 3 | 4\n  | 5 | 6 |"},
		{"not a table", "a | b\n--- | --x", 80, "  a | b --- | --x"},
		{"html", "<div>\n  <b>hi</b>\n</div>\n\ntext <br> more", 80,
			"  <div>\n    <b>hi</b>\n  </div>\n\n  text <br> more"},
		{"crlf", "a\r\nb\r\n\r\n- c\r\n", 80, "  a b\n\n  • c"},
		{"empty", "\n\n", 80, ""},
		{"empty item", "- a\n-", 80, "  • a\n  •"},
		{"deep nesting", strings.Repeat("> ", 12) + "deep", 20,
			strings.Repeat("\n  │ │ │ │ │ │ │ │…", 4)[1:]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := renderPlain(tc.src, tc.width); got != tc.want {
				t.Errorf("render(%q, %d):\n%s\nwant:\n%s\n(%q)", tc.src, tc.width, got, tc.want, got)
			}
		})
	}
}

// sampleAnswer is an answer with a bit of everything.
const sampleAnswer = "# Test report\n\n" +
	"The suite ran on **3 packages**; one needs *attention*. See `go test ./...` and the [Go docs](https://go.dev/doc) for more.\n\n" +
	"## Results\n\n" +
	"- `agent`: ok in 0.1s\n- `cli`: ok\n  1. unit tests\n  2. end-to-end tests\n- [x] lint clean\n- [ ] flaky test fixed\n\n" +
	"```go\nfunc TestAdd(t *testing.T) {\n\tif add(1, 2) != 3 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n```\n\n" +
	"| Package | Tests | Time |\n|:--------|------:|-----:|\n| agent   | 42    | 0.1s |\n| cli     | 17    | 2.3s |\n\n" +
	"> Note: run with `-race` before merging.\n\n---\n\nThat's all.\n"

func TestMarkdownSample(t *testing.T) {
	want := `  # Test report

  The suite ran on 3 packages; one needs attention. See go test ./... and the
  Go docs (https://go.dev/doc) for more.

  ## Results

  • agent: ok in 0.1s
  • cli: ok
    1. unit tests
    2. end-to-end tests
  [✓] lint clean
  [ ] flaky test fixed

  ╭─ go
  │ func TestAdd(t *testing.T) {
  │     if add(1, 2) != 3 {
  │         t.Fatal("bad")
  │     }
  │ }
  ╰─

  Package │ Tests │ Time
  ────────┼───────┼─────
  agent   │    42 │ 0.1s
  cli     │    17 │ 2.3s

  │ Note: run with -race before merging.

  ────────────────────────────────────────────────────────────────────────────

  That's all.`
	if got := renderPlain(sampleAnswer, 80); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// sgrCode matches an SGR sequence.
var sgrCode = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// checkLines fails t unless every line of out fits in width columns, has
// no trailing spaces, and closes the styles it opens; and out has no blank
// lines around it.
func checkLines(t *testing.T, src, out string, width int) {
	t.Helper()
	if strings.HasPrefix(out, "\n") || strings.HasSuffix(out, "\n") {
		t.Errorf("blank lines around the render of %q:\n%s", src, out)
	}
	for _, l := range strings.Split(out, "\n") {
		plain := ansi.Strip(l)
		if w := ansi.StringWidth(plain); w > width {
			t.Errorf("line %q is %d columns, more than %d (src %q)", plain, w, width, src)
		}
		if strings.HasSuffix(plain, " ") {
			t.Errorf("line %q ends with a space (src %q)", plain, src)
		}
		if codes := sgrCode.FindAllString(l, -1); len(codes) > 0 && codes[len(codes)-1] != ansi.ResetStyle {
			t.Errorf("line %q leaves a style open (src %q)", l, src)
		}
	}
}

func TestMarkdownPlainIsColourStripped(t *testing.T) {
	for _, src := range []string{sampleAnswer, benchAnswer, helpText(builtinEntries()), "a `code` **b *c* d** [l](u) e\n\n| x | y |\n|--|--|\n| `1` | **2** |"} {
		for _, dark := range []bool{true, false} {
			for _, width := range []int{30, 80} {
				colour := (&markdown{}).render(src, width, dark)
				plain := (&markdown{plain: true}).render(src, width, dark)
				if sgrCode.MatchString(plain) || strings.Contains(plain, "\x1b") {
					t.Fatalf("escape codes in the plain render: %q", plain)
				}
				if !sgrCode.MatchString(colour) {
					t.Fatalf("no SGR codes in the colour render: %q", colour)
				}
				if got := ansi.Strip(colour); got != plain {
					t.Errorf("dark=%v width=%d: the colour render is not the plain one with colours:\n%s\n---\n%s", dark, width, got, plain)
				}
				checkLines(t, src, colour, width)
			}
		}
	}
}

func TestMarkdownStyles(t *testing.T) {
	var md markdown
	dark := md.render("# Title\n\n**bold** *it* `code` [link](u)", 80, true)
	for _, want := range []string{
		"\x1b[1;38;5;75m#\x1b[m \x1b[1;38;5;75mTitle\x1b[m",
		"\x1b[1mbold\x1b[m", "\x1b[3mit\x1b[m", "\x1b[38;5;203;48;5;236mcode\x1b[m",
		"\x1b[4;38;5;35mlink\x1b[m", "\x1b[38;5;245m(u)\x1b[m",
	} {
		if !strings.Contains(dark, want) {
			t.Errorf("%q not in %q", want, dark)
		}
	}
	light := md.render("# Title", 80, false)
	if !strings.Contains(light, "38;5;25m") || light == md.render("# Title", 80, true) {
		t.Errorf("the light background has the dark colours: %q", light)
	}
	if got := md.render("***both*** `**code**`", 80, true); !strings.Contains(got, "\x1b[1;3mboth") || !strings.Contains(got, "**code**") {
		t.Errorf("nested styles: %q", got)
	}
}

func TestMarkdownTrimsPadding(t *testing.T) {
	var md markdown
	out := md.render("# Title\n\nSome **bold** text.\n\n- a\n- b", 60, true)
	plain := ansi.Strip(out)
	if strings.Contains(plain, "**") || !strings.Contains(plain, "Some bold text.") {
		t.Fatalf("not rendered: %q", plain)
	}
	checkLines(t, "", out, 60)
}

// TestMarkdownStreaming renders every prefix of answers, as they are while
// streamed, at a few widths.
func TestMarkdownStreaming(t *testing.T) {
	var md markdown
	// The sample and one step of benchAnswer: the steps repeat.
	for _, src := range []string{benchAnswer[:len(sampleAnswer)+500]} {
		for _, width := range []int{24, 57, 100} {
			for i := range len(src) + 1 {
				if !utf8.RuneStart(src[min(i, len(src)-1)]) && i < len(src) {
					continue
				}
				checkLines(t, src[:i], md.render(src[:i], width, true), width)
				if t.Failed() {
					return
				}
			}
		}
	}
}

// TestMarkdownLinksNoHeavyPackages checks that the renderer keeps out what
// made rein slow to start: package initialisation of glamour's syntax
// highlighter, HTML sanitizer and goldmark's extensions and HTML renderer.
func TestMarkdownLinksNoHeavyPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test runs go list over the package (run without -short; CI does)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("environment: the go command is not on PATH: cannot list the package's dependencies")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	heavy := regexp.MustCompile(`(?m)^.*(chroma|glamour|bluemonday|goldmark/extension|goldmark/renderer|goldmark-emoji|regexp2).*$`)
	if m := heavy.FindAllString(string(out), -1); len(m) > 0 {
		t.Errorf("cli/tui links %s", strings.Join(m, ", "))
	}
}

func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{sampleAnswer, "- [x]", "|a|\n|-|\n|\\|", "```\n\t\x00", "> - [ ] `x|y`\n> | a |\n> |:-:|", "1. \n2.", "<a\n\n*"} {
		f.Add(s, 40)
	}
	f.Fuzz(func(t *testing.T, src string, width int) {
		width = 20 + abs(width)%100
		var md markdown
		out := md.render(src, width, true)
		for _, l := range strings.Split(out, "\n") {
			if w := ansi.StringWidth(l); w > width {
				t.Errorf("line %q is %d columns, more than %d", l, w, width)
			}
		}
	})
}

// abs is the absolute value of n (0 for the smallest int).
func abs(n int) int {
	if n < 0 {
		return max(0, -n)
	}
	return n
}

// benchAnswer is a 4 KB answer (ASCII), of the kind the TUI streams.
var benchAnswer = func() string {
	var b strings.Builder
	b.WriteString(sampleAnswer)
	for b.Len() < 4096 {
		b.WriteString("\n## Step\n\nThe **agent** loop calls the model, runs the `tool` calls it asks for, and feeds the results back until the model answers without one. " +
			"Each turn is *recorded* in the session so `rein --resume` picks it up; see [the docs](https://example.com/docs/agent-loop) for more.\n\n" +
			"1. read the file\n2. edit it\n   - keep the tests passing\n   - run `gofmt`\n\n```go\nfor ev := range run.Events() {\n\tfmt.Println(ev.Type)\n}\n```\n")
	}
	return b.String()[:4096] // cut as while streamed
}()

// BenchmarkRenderMarkdown renders a 4 KB answer for an 100-column terminal,
// as the TUI does up to 30 times a second while it streams.
func BenchmarkRenderMarkdown(b *testing.B) {
	var md markdown
	md.render(benchAnswer, 100, true)
	b.SetBytes(int64(len(benchAnswer)))
	b.ReportAllocs()
	for b.Loop() {
		md.render(benchAnswer, 100, true)
	}
}
