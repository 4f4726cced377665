package kb

import (
	"path"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDeclName(t *testing.T) {
	for line, want := range map[string]string{
		"func Backoff(n int) time.Duration {":       " Backoff",
		"func (t *Transport) RoundTrip(r *Request)": "Transport RoundTrip",
		"func (Once) Do(f func())":                  "Once Do",
		"type Client struct {":                      " Client",
		"var ErrClosed = errors.New(":               " ErrClosed",
		"const (":                                   "",
		"pub fn parse_url(s: &str)":                 " parse_url",
		"export default class Router {":             " Router",
		"async def fetch_all(urls):":                " fetch_all",
		"func (broken":                              "",
	} {
		if got := declName(line); got != want {
			t.Errorf("declName(%q) = %q, want %q", line, got, want)
		}
	}
}

// ChunkTerms weighs fields by repetition (SPEC KB-4): the path's terms
// pathWeight times, a declared name declWeight times more than the text
// has it, the enclosing heading headingWeight times.
func TestChunkTermsFields_KB4(t *testing.T) {
	c := Chunk{Doc: "net/http/client.go", Heading: "type Client struct {",
		Text: "// Do sends a request.\nfunc (c *Client) Do(req *Request) {\n\tsend(req)\n}\n"}
	terms := ChunkTerms(c)
	count := func(term string) int {
		n := 0
		for _, t := range terms {
			if t == term {
				n++
			}
		}
		return n
	}
	for term, want := range map[string]int{
		"net":     pathWeight,
		"http":    pathWeight,
		"client":  pathWeight + declWeight + headingWeight + 1,
		"sends":   1,
		"request": 2, // the comment and *Request
		"send":    1,
		"go":      0, // the extension is no term
	} {
		if got := count(term); got != want {
			t.Errorf("%q: %d times, want %d (terms %v)", term, got, want, terms)
		}
	}
	md := ChunkTerms(Chunk{Doc: "docs/guide.md", Text: "## Deploying\n\nRun make.\n"})
	if n := strings.Count(strings.Join(md, " "), "deploying"); n != declWeight+1 {
		t.Errorf("a Markdown heading in the chunk: %d times, want %d", n, declWeight+1)
	}
	html := ChunkTerms(Chunk{Doc: "go_spec.html", Text: "<h2 id=\"Types\">Types</h2>\n<p>A type</p>\n"})
	if !slices.Contains(html, "types") {
		t.Errorf("an HTML heading: %v", html)
	}
}

func FuzzChunkTerms(f *testing.F) {
	f.Add("a/b_test.go", "func (t *T) M() {}\n// doc\ntype X int\n")
	f.Add("x.md", "# H\n\ntext\n")
	f.Add("x.html", "<h1>\n<h")
	f.Add("", "func (")
	f.Add("a.md", "aꂂed xꂂꂂing") // U+A082 ends in two equal bytes: a doubled letter to undo?
	f.Fuzz(func(t *testing.T, doc, text string) {
		terms := ChunkTerms(Chunk{Doc: doc, Text: text})
		body := Terms(text)
		if len(terms) < len(body) {
			t.Fatalf("%d terms, fewer than the text's %d", len(terms), len(body))
		}
		for _, term := range terms {
			if term == "" || len(term) > MaxTermLen {
				t.Fatalf("bad term %q", term)
			}
		}
		q := analyseQuery(text)
		for _, term := range q.terms {
			// A variant (a stem, a singular) is still whole characters:
			// a backend may refuse invalid UTF-8.
			if term == "" || len(term) > MaxTermLen || !utf8.ValidString(term) {
				t.Fatalf("bad query term %q", term)
			}
		}
		Demoted(doc)
	})
}

// FuzzChunkFields: a chunk's terms are its fields', each analysed once
// and repeated by its weight, whatever the text (KB-4).
func FuzzChunkFields(f *testing.F) {
	f.Add("net/http/client.go", "type Client struct {", "func (c *Client) Do(req *Request) {\n\tread_file(ÄRequest)\n}\n", "client")
	f.Add("doc.md", "# 读取文件", "读取文件 line_by_line HTTPServer utf8", "文件")
	f.Add("a.go", "", "x__y ReadFileReadFile readfile", "readfile")
	f.Fuzz(func(t *testing.T, doc, heading, text, _ string) {
		c := Chunk{Doc: doc, Heading: heading, Text: text}
		// Each field analysed once and repeated is the fields joined and
		// analysed.
		p := strings.TrimSuffix(doc, path.Ext(doc))
		d := declared(doc, text)
		joined := strings.Repeat(p+"\n", pathWeight) + strings.Repeat(d+"\n", declWeight) + strings.Repeat(heading+"\n", headingWeight) + text
		if got, exp := ChunkTerms(c), Terms(joined); !slices.Equal(got, exp) {
			t.Fatalf("ChunkTerms = %q, the fields joined give %q", got, exp)
		}
		if got, exp := JoinedChunkTerms(c), strings.Join(ChunkTerms(c), " "); got != exp {
			t.Fatalf("JoinedChunkTerms = %q, want %q", got, exp)
		}
	})
}
