package tui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

func TestParseCommand(t *testing.T) {
	for _, tc := range []struct {
		line, name, args string
		ok               bool
	}{
		{"/help", "help", "", true},
		{"  /model   gpt-5  ", "model", "gpt-5", true},
		{"/compact keep the API notes\nand the plan", "compact", "keep the API notes\nand the plan", true},
		{"/quit", "exit", "", true},
		{"/?", "help", "", true},
		{"/etc/hosts is wrong", "", "", false},
		{"hello /model", "", "", false},
		{"/", "", "", false},
	} {
		name, args, ok := parseCommand(tc.line)
		if name != tc.name || args != tc.args || ok != tc.ok {
			t.Errorf("parseCommand(%q) = %q, %q, %v; want %q, %q, %v", tc.line, name, args, ok, tc.name, tc.args, tc.ok)
		}
	}
}

func TestSuggestCommand(t *testing.T) {
	for in, want := range map[string]string{"mod": "model", "modle": "model", "sesions": "sessions", "zzzzzz": "", "comapct": "compact"} {
		if got := suggestCommand(in); got != want {
			t.Errorf("suggestCommand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestToolSummary(t *testing.T) {
	for _, tc := range []struct {
		name, input, want string
	}{
		{"bash", `{"command":"go test ./...","timeout":60}`, "bash(go test ./...)"},
		{"read_file", `{"path":"main.go","offset":3}`, "read_file(main.go)"},
		{"edit_file", `{"file_path":"a.go","old":"x","new":"y"}`, "edit_file(a.go)"},
		{"web_fetch", `{"url":"https://go.dev"}`, "web_fetch(https://go.dev)"},
		{"mcp__x__y", `{"zeta":"last","alpha":"first"}`, "mcp__x__y(first)"},
		{"todo", `{"items":[1,2]}`, "todo"},
		{"bash", `{"command":"echo a\n  echo b"}`, "bash(echo a echo b)"},
	} {
		if got := toolSummary(tc.name, json.RawMessage(tc.input)); got != tc.want {
			t.Errorf("toolSummary(%s, %s) = %q, want %q", tc.name, tc.input, got, tc.want)
		}
	}
	long := toolSummary("bash", json.RawMessage(`{"command":"`+strings.Repeat("x", 200)+`"}`))
	if w := ansi.StringWidth(long); w > 90 {
		t.Errorf("long summary is %d columns", w)
	}
}

func TestInputLines(t *testing.T) {
	got := inputLines(json.RawMessage(`{"command":"a\nb\nc\nd"}`), 3)
	if strings.Join(got, "|") != "a|b|… +2 lines" {
		t.Errorf("got %q", got)
	}
	got = inputLines(json.RawMessage(`{"b":2,"a":"x"}`), 5)
	if strings.Join(got, "|") != "a: x|b: 2" {
		t.Errorf("got %q", got)
	}
}

func TestSplitStable(t *testing.T) {
	for _, tc := range []struct{ in, stable, rest string }{
		{"one\n\ntwo", "one\n\n", "two"},
		{"one", "", "one"},
		{"a\n\n```\ncode\n\nmore\n", "a\n\n", "```\ncode\n\nmore\n"},
		{"a\n\n```\ncode\n```\n\nb", "a\n\n```\ncode\n```\n\n", "b"},
	} {
		stable, rest := splitStable(tc.in)
		if stable != tc.stable || rest != tc.rest {
			t.Errorf("splitStable(%q) = %q, %q; want %q, %q", tc.in, stable, rest, tc.stable, tc.rest)
		}
	}
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{fmtDuration(400), "0.4s"},
		{fmtDuration(7012), "7.0s"},
		{fmtDuration(65000), "1m05s"},
		{fmtDelay(2 * time.Second), "2s"},
		{fmtDelay(1500 * time.Millisecond), "1.5s"},
		{fmtDelay(299 * time.Second), "4m59s"},
		{fmtTokens(950), "950"},
		{fmtTokens(12345), "12.3k"},
		{fmtTokens(1_200_000), "1.2M"},
		{fmtCost(0.0096), "$0.0096"},
		{fmtCost(12.5), "$12.50"},
		{oneLine("a\n  b\tc", 80), "a b c"},
		{oneLine("abcdefghij", 5), "abcd…"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// CLI-6: a print taller than the room above the view goes in pieces that
// fit; a line wider than the terminal counts for the rows it wraps onto.
func TestSplitRows(t *testing.T) {
	for _, tc := range []struct {
		name, s            string
		width, rows        int
		wantHead, wantRest string
		wantSplit          bool
	}{
		{"fits", "a\nb\nc", 80, 3, "a\nb\nc", "", false},
		{"one too many", "a\nb\nc", 80, 2, "a\nb", "c", true},
		{"empty lines count", "a\n\n\nb", 80, 2, "a\n", "\nb", true},
		{"a wide line wraps", "aaaaaaaaaa\nb\nc", 4, 4, "aaaaaaaaaa\nb", "c", true},
		{"a line taller than the room still goes", "aaaaaaaaaa\nb", 4, 2, "aaaaaaaaaa", "b", true},
		{"no room: one line at a time", "a\nb", 80, 0, "a", "b", true},
		{"styles do not count", "\x1b[1mab\x1b[0m\nc", 2, 1, "\x1b[1mab\x1b[0m", "c", true},
		{"a trailing empty line is a row", "a\n", 80, 1, "a", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head, rest, split := splitRows(tc.s, tc.width, tc.rows)
			if head != tc.wantHead || rest != tc.wantRest || split != tc.wantSplit {
				t.Errorf("splitRows(%q, %d, %d) = %q, %q, %v; want %q, %q, %v", tc.s, tc.width, tc.rows, head, rest, split, tc.wantHead, tc.wantRest, tc.wantSplit)
			}
			if split && head+"\n"+rest != tc.s {
				t.Errorf("pieces %q + %q do not make %q", head, rest, tc.s)
			}
		})
	}
}
