package fileindex

import (
	"strings"
	"testing"
)

// CLI-6: @file#20-45 and its spellings; bad ranges say what is wrong.
func TestParseRange_CLI6(t *testing.T) {
	for _, tc := range []struct {
		in, file string
		r        Range
		ok       bool
		err      string
	}{
		{in: "a.go", file: "a.go"},
		{in: "a.go#20-45", file: "a.go", r: Range{20, 45}, ok: true},
		{in: "a.go#L20-L45", file: "a.go", r: Range{20, 45}, ok: true},
		{in: "dir/a#b.go#7", file: "dir/a#b.go", r: Range{7, 7}, ok: true},
		{in: "a.go#L3", file: "a.go", r: Range{3, 3}, ok: true},
		{in: "a.go#45-20", err: "ends (20) before it starts (45)"},
		{in: "a.go#0", err: "out of range"},
		{in: "a.go#x", err: "is not a line number"},
		{in: "a.go#", err: "is not a line number"},
		{in: "a.go#1-", err: "is not a line number"},
		{in: "a.go#99999999999", err: "is not a line number"},
		{in: "#5", err: "no file before the #"},
	} {
		file, r, ok, err := ParseRange(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || file != tc.file || r != tc.r || ok != tc.ok {
			t.Errorf("%q: %q %+v %v %v", tc.in, file, r, ok, err)
		}
	}
}

func TestLines_CLI6(t *testing.T) {
	text := "one\ntwo\nthree\n"
	if got, all := Lines(text, Range{2, 3}); got != "     2\ttwo\n     3\tthree\n" || !all {
		t.Errorf("2-3: %q %v", got, all)
	}
	if got, all := Lines(text, Range{3, 9}); got != "     3\tthree\n" || all {
		t.Errorf("3-9: %q %v", got, all)
	}
	if got, all := Lines(text, Range{5, 6}); got != "" || all {
		t.Errorf("5-6: %q %v", got, all)
	}
}

// FuzzParseRange: any mention is parsed or refused; a parsed range is
// ordered and in bounds, and the file is a prefix of the input.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"a.go#20-45", "a#L1-L2", "#", "a##", "a#-1", "a#1-2-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		file, r, ok, err := ParseRange(s)
		if err != nil || !ok {
			return
		}
		if r.Start < 1 || r.End < r.Start || r.End > maxLine || !strings.HasPrefix(s, file+"#") {
			t.Fatalf("%q: %q %+v", s, file, r)
		}
	})
}
