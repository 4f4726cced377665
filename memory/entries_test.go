package memory

import (
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// MEM-4: files people edit by hand parse leniently and keep their text.
func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want File
	}{
		{"empty", "", File{}},
		{"heading only", "# Notes\n", File{Header: "# Notes"}},
		{"items", "# Notes\n\n- one\n- two\n", File{Header: "# Notes", Entries: []string{"one", "two"}}},
		{"other markers and CRLF", "* one\r\n+ two\r\n-\tthree\r\n", File{Entries: []string{"one", "two", "three"}}},
		{"continuation lines", "- first line\n  second line\n\n  after a blank\n- next\n",
			File{Entries: []string{"first line\nsecond line\n\nafter a blank", "next"}}},
		{"unindented continuation", "- item\nmore text\n", File{Entries: []string{"item\nmore text"}}},
		{"nested list stays inside", "- parent\n  - child\n  - child 2\n", File{Entries: []string{"parent\n- child\n- child 2"}}},
		{"fence with a marker inside", "- code:\n```\n- not an item\n```\n- next\n",
			File{Entries: []string{"code:\n```\n- not an item\n```", "next"}}},
		{"fence on the item line", "- ```go\n  x := 1\n  ```\n- y\n", File{Entries: []string{"```go\nx := 1\n```", "y"}}},
		{"unclosed fence swallows the rest", "- ```\n- a\n- b\n", File{Entries: []string{"```\n- a\n- b"}}},
		{"header with text", "# Notes\nKept by rein.\n\n- one\n", File{Header: "# Notes\nKept by rein.", Entries: []string{"one"}}},
		{"paragraphs", "# Profile\n\nLikes Go.\n\nPrefers tabs,\nnot spaces.\n", File{Header: "# Profile", Entries: []string{"Likes Go.", "Prefers tabs,\nnot spaces."}}},
		{"paragraph with a fence and blank lines", "```\na\n\nb\n```\n\nnext\n", File{Entries: []string{"```\na\n\nb\n```", "next"}}},
		{"only empty items", "intro\n-\n", File{Entries: []string{"intro\n-"}}},
		{"horizontal rule is not an item", "---\n- a\n", File{Header: "---", Entries: []string{"a"}}},
		{"bold is not an item", "**bold**\n", File{Entries: []string{"**bold**"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("Parse(%q) (-want +got):\n%s", tt.in, diff)
			}
			checkRoundTrip(t, tt.in)
		})
	}
}

func TestRender(t *testing.T) {
	f := File{Header: "# Notes", Entries: []string{"one", "two\nlines\n\nwith a blank", "```go\nx := 1"}}
	want := "# Notes\n\n- one\n- two\n  lines\n\n  with a blank\n- ```go\n  x := 1\n"
	if diff := cmp.Diff(want, f.Render()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	// An open fence that is not last is closed, so it cannot swallow
	// the entries after it.
	f = File{Entries: []string{"```\ncode", "after"}}
	if got := Parse(f.Render()).Entries; len(got) != 2 || got[1] != "after" {
		t.Fatalf("entries after an open fence: %q", got)
	}
	if got := (File{Header: "# Notes"}).Render(); got != "# Notes\n" {
		t.Fatalf("header only: %q", got)
	}
}

func TestNormalise(t *testing.T) {
	tests := []struct{ in, want string }{
		{"  hello  ", "hello"},
		{"a  \r\nb\t\n", "a\nb"},
		{"a\n\n\n\nb", "a\n\nb"},
		{"```\nx\n\n\n\ny\n```", "```\nx\n\n\n\ny\n```"},
		{"```go\nx := 1", "```go\nx := 1\n```"},
	}
	for _, tt := range tests {
		if got := normalise(tt.in); got != tt.want {
			t.Errorf("normalise(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if dedupKey("Prefers  TABS\n") != dedupKey("prefers tabs") {
		t.Fatal("dedupKey must ignore case and white space")
	}
}

// checkRoundTrip checks that Parse → Render → Parse is stable and keeps
// every character of text but list markers and white space.
func checkRoundTrip(t *testing.T, in string) {
	t.Helper()
	f := Parse(in)
	out := f.Render()
	if diff := cmp.Diff(f, Parse(out)); diff != "" {
		t.Fatalf("Parse(Render(Parse(%q))) differs (-first +second):\n%s\nrendered:\n%s", in, diff, out)
	}
	if a, b := content(in), content(out); a != b {
		t.Fatalf("text lost or changed on a round trip of %q:\nbefore: %q\nafter:  %q\nrendered: %q", in, a, b, out)
	}
}

// content is s without white space and list-marker characters.
func content(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '-' || r == '*' || r == '+' {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}
