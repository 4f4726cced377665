package gateway

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestSplit(t *testing.T) {
	cases := []struct {
		name, text string
		limit      int
		want       []string
	}{
		{"empty", "  \n ", 10, nil},
		{"fits", "hello", 10, []string{"hello"}},
		{"at a paragraph", "first part\n\nsecond part", 15, []string{"first part", "second part"}},
		{"at a line", "line one\nline two\nline three", 18, []string{"line one\nline two", "line three"}},
		{"at a space", "aaa bbb ccc ddd", 8, []string{"aaa bbb", "ccc ddd"}},
		{"mid-word", "abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"runes, not bytes", "日本語のテキスト", 3, []string{"日本語", "のテキ", "スト"}},
		{"limit below 1", "ab", 0, []string{"a", "b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Split(tc.text, tc.limit)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Errorf("Split(%q, %d) = %q, want %q", tc.text, tc.limit, got, tc.want)
			}
		})
	}
}

// FuzzSplit: every part fits, none is empty, and the parts hold every
// non-blank character of the text in order.
func FuzzSplit(f *testing.F) {
	f.Add("hello world\n\nsecond paragraph\nwith lines", 7)
	f.Add("日本語 のテキスト", 2)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if !utf8.ValidString(text) || limit > 1<<16 {
			return
		}
		parts := Split(text, limit)
		for _, p := range parts {
			if p == "" || utf8.RuneCountInString(p) > max(limit, 1) {
				t.Fatalf("part %q of Split(%q, %d)", p, text, limit)
			}
		}
		if squash(strings.Join(parts, "")) != squash(text) {
			t.Fatalf("Split(%q, %d) = %q loses text", text, limit, parts)
		}
	})
}

func squash(s string) string { return strings.Join(strings.Fields(s), "") }

// retry waits a RetryError's After, backs off without one, and stops at a
// final error or a done context.
func TestRetry(t *testing.T) {
	calls := 0
	v, err := retry(t.Context(), func() (int, error) {
		calls++
		if calls < 3 {
			return 0, &RetryError{After: time.Millisecond, Err: errors.New("429")}
		}
		return 7, nil
	})
	if v != 7 || err != nil || calls != 3 {
		t.Errorf("= %d, %v after %d calls; want 7 after 3", v, err, calls)
	}
	calls = 0
	final := errors.New("400 chat not found")
	if _, err := retry(t.Context(), func() (int, error) { calls++; return 0, final }); !errors.Is(err, final) || calls != 1 {
		t.Errorf("a final error: %v after %d calls", err, calls)
	}
	ctx, cancel := context.WithCancel(t.Context())
	calls = 0
	_, err = retry(ctx, func() (int, error) {
		calls++
		cancel()
		return 0, &RetryError{Err: errors.New("503")}
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("a cancelled wait: %v after %d calls", err, calls)
	}
}

func TestCommandParse(t *testing.T) {
	cases := []struct{ in, name, arg string }{
		{"/stop", "stop", ""},
		{"/STOP@my_bot", "stop", ""},
		{"/model  openai/gpt-5 ", "model", "openai/gpt-5"},
		{"/approve abc always", "approve", "abc always"},
		{"/etc/hosts is broken", "", ""},
		{"/", "", ""},
		{"stop", "", ""},
	}
	for _, tc := range cases {
		name, arg, ok := command(tc.in)
		if name != tc.name || arg != tc.arg || ok != (tc.name != "") {
			t.Errorf("command(%q) = %q, %q, %v", tc.in, name, arg, ok)
		}
	}
}

func TestToolHint(t *testing.T) {
	for in, want := range map[string]string{
		`{"command":"go   test\n./..."}`: "🔧 bash: go test ./...",
		`{"path":"a.go"}`:                "🔧 bash: a.go",
		`not json`:                       "🔧 bash",
	} {
		if got := toolHint("bash", []byte(in)); got != want {
			t.Errorf("toolHint(%s) = %q, want %q", in, got, want)
		}
	}
}
