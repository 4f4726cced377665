package kb

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// span is a chunk's lines and heading, for comparing.
type chunkSpan struct {
	Start, End int
	Heading    string
}

func spans(cs []Chunk) []chunkSpan {
	out := []chunkSpan{}
	for _, c := range cs {
		out = append(out, chunkSpan{c.Start, c.End, c.Heading})
	}
	return out
}

// lines returns n numbered lines.
func lines(prefix string, n int) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "%s line %d\n", prefix, i+1)
	}
	return sb.String()
}

func TestSplitSmall(t *testing.T) {
	for _, tc := range []struct {
		name, path, text string
		want             []Chunk
	}{
		{"empty", "a.txt", "", nil},
		{"one line", "a.txt", "hello", []Chunk{{Doc: "a.txt", Start: 1, End: 1, Text: "hello"}}},
		{"trailing newline", "a.txt", "a\nb\n", []Chunk{{Doc: "a.txt", Start: 1, End: 2, Text: "a\nb"}}},
		{"CRLF", "a.txt", "a\r\nb\r\n", []Chunk{{Doc: "a.txt", Start: 1, End: 2, Text: "a\nb"}}},
		{"blank lines", "a.txt", "\n\n\n", []Chunk{{Doc: "a.txt", Start: 1, End: 3, Text: "\n\n"}}},
		{"markdown heading", "a.md", "# Title\n\ntext", []Chunk{{Doc: "a.md", Start: 1, End: 3, Heading: "Title", Text: "# Title\n\ntext"}}},
		{"go declaration", "a.go", "package a\n\nfunc F() {\n\treturn\n}\n", []Chunk{{Doc: "a.go", Start: 1, End: 5, Heading: "package a", Text: "package a\n\nfunc F() {\n\treturn\n}"}}},
	} {
		if diff := cmp.Diff(tc.want, Split(tc.path, tc.text, ChunkOptions{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestSplitLongLine(t *testing.T) {
	text := "short\n" + strings.Repeat("é", 5000) + "\nend"
	cs := Split("min.js", text, ChunkOptions{})
	if len(cs) != 1 {
		t.Fatalf("%d chunks, want 1", len(cs))
	}
	want := "short\n" + strings.Repeat("é", 1000) + "\nend"
	if cs[0].Text != want {
		t.Errorf("a long line is not cut to 2,000 bytes: %d bytes", len(cs[0].Text))
	}
}

func TestSplitMarkdown(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("# Guide\n\nintro\n\n")                    // 1-4
	sb.WriteString("## Install\n\n" + lines("install", 30))   // 5-36
	sb.WriteString("## Usage\n\n```go\n" + lines("code", 40)) // 37-79
	sb.WriteString("```\n\n" + lines("after", 20))            // 80-101
	sb.WriteString("### Tiny\ntiny\n### Tiny2\ntiny2\n")      // 102-105
	sb.WriteString("## Big section\n\n" + lines("big", 150))  // 106-257
	cs := Split("doc/guide.md", sb.String(), ChunkOptions{})
	got := spans(cs)
	// The usage section's code block (lines 39-80) stays whole.
	for _, c := range cs {
		if c.Start > 39 && c.Start <= 80 {
			t.Errorf("a chunk starts at line %d, inside the code block 39-80: %v", c.Start, got)
		}
	}
	// Sections start chunks: Usage at 37, Big section at 106; the short
	// first section shares its chunk with the next.
	starts := map[int]string{}
	for _, c := range cs {
		starts[c.Start] = c.Heading
	}
	for line, heading := range map[int]string{1: "Guide", 37: "Usage", 106: "Big section"} {
		if starts[line] != heading {
			t.Errorf("no chunk starts at line %d under %q: %v", line, heading, got)
		}
	}
	// The big section is cut into pieces of at most 90 lines that keep its heading.
	for _, c := range cs {
		if c.End-c.Start+1 > 90 {
			t.Errorf("chunk %d-%d is longer than 1.5× the target", c.Start, c.End)
		}
		if c.Start > 106 && c.Heading != "Big section" {
			t.Errorf("chunk %d-%d has heading %q, want the section's", c.Start, c.End, c.Heading)
		}
	}
}

func TestSplitGo(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("package p\n\n")
	for i := range 10 {
		fmt.Fprintf(&sb, "// F%d does things.\nfunc (r *Reader) F%d(x int) error {\n", i, i)
		for j := range 20 {
			fmt.Fprintf(&sb, "\tstep(%d, %d)\n", i, j)
		}
		sb.WriteString("}\n\n")
	}
	cs := Split("p/reader.go", sb.String(), ChunkOptions{})
	for _, c := range cs {
		last := strings.Split(c.Text, "\n")
		if end := last[len(last)-1]; c.End != strings.Count(sb.String(), "\n") && end != "}" && end != "" {
			t.Errorf("chunk %d-%d ends inside a function (%q): want cuts at the end of declarations", c.Start, c.End, end)
		}
		if !strings.HasPrefix(c.Heading, "func (r *Reader) F") && c.Start > 1 {
			t.Errorf("chunk %d-%d has heading %q, want a method's declaration", c.Start, c.End, c.Heading)
		}
	}
	if len(cs) < 3 {
		t.Errorf("%d chunks for 230 lines", len(cs))
	}
}

// Text without breaks is cut at the target with the configured overlap.
func TestSplitOverlap(t *testing.T) {
	cs := Split("a.txt", lines("x", 200), ChunkOptions{Lines: 40, Overlap: 5})
	for i := 1; i < len(cs); i++ {
		if got := cs[i-1].End - cs[i].Start + 1; got != 5 {
			t.Errorf("chunks %d and %d overlap by %d lines, want 5: %v", i-1, i, got, spans(cs))
		}
	}
}

// checkSplit checks Split's promises: chunks cover every line, in order,
// each a run of whole lines (cut to MaxLine bytes, without "\r").
func checkSplit(t *testing.T, path, text string, opts ChunkOptions) {
	t.Helper()
	cs := Split(path, text, opts)
	o := opts.withDefaults()
	all := strings.Split(text, "\n")
	if strings.HasSuffix(text, "\n") {
		all = all[:len(all)-1]
	}
	if text == "" {
		all = nil
	}
	if len(all) == 0 {
		if len(cs) != 0 {
			t.Fatalf("chunks of an empty text: %v", spans(cs))
		}
		return
	}
	if len(cs) == 0 || cs[0].Start != 1 || cs[len(cs)-1].End != len(all) {
		t.Fatalf("chunks %v do not cover lines 1-%d", spans(cs), len(all))
	}
	for i, c := range cs {
		if c.Start > c.End || c.Doc != path {
			t.Fatalf("chunk %d: %+v", i, c)
		}
		if i > 0 && (c.Start <= cs[i-1].Start || c.Start > cs[i-1].End+1) {
			t.Fatalf("chunk %d (%d-%d) does not follow chunk %d (%d-%d)", i, c.Start, c.End, i-1, cs[i-1].Start, cs[i-1].End)
		}
		want := make([]string, 0, c.End-c.Start+1)
		for _, l := range all[c.Start-1 : c.End] {
			l = strings.TrimSuffix(l, "\r")
			if len(l) > o.MaxLine {
				l = clipLine(l, o.MaxLine)
			}
			want = append(want, l)
		}
		if c.Text != strings.Join(want, "\n") {
			t.Fatalf("chunk %d (%d-%d): text %q, want %q", i, c.Start, c.End, c.Text, strings.Join(want, "\n"))
		}
		if n := c.End - c.Start + 1; n > 2*o.Lines && n > 1 {
			t.Fatalf("chunk %d has %d lines, more than twice the target %d", i, n, o.Lines)
		}
		if len(c.Heading) > maxHeading {
			t.Fatalf("chunk %d: heading of %d bytes", i, len(c.Heading))
		}
	}
}

// clipLine cuts a line as Split does: to n bytes on a character boundary.
func clipLine(l string, n int) string {
	for n > 0 && l[n]&0xC0 == 0x80 {
		n--
	}
	return l[:n]
}

func FuzzSplit(f *testing.F) {
	f.Add("a.md", "# T\n\n```\ncode\n```\ntext\n## U\nmore", 4, 100, 1, 30)
	f.Add("a.go", "package p\n\nfunc F() {\n}\n\ntype T struct{}\n", 2, 50, 1, 10)
	f.Add("a.txt", "x\r\ny\n\n\nz", 1, 1, 0, 1)
	f.Add("b.md", "~~~\n~~~\n````\n# not\n````\n", 3, 20, -1, 5)
	f.Fuzz(func(t *testing.T, path, text string, lines, chars, overlap, maxLine int) {
		opts := ChunkOptions{Lines: lines % 200, Chars: chars % 20000, Overlap: overlap % 50, MaxLine: maxLine % 5000}
		checkSplit(t, path, text, opts)
	})
}
