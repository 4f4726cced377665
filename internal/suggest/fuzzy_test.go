package suggest

import (
	"strings"
	"testing"
)

// Fuzzy ranks as a person expects: a prefix before a substring before
// a scattered subsequence; no match when a rune is missing or out of order.
func TestFuzzy_CLI6(t *testing.T) {
	for _, tc := range []struct {
		q, better, worse string
	}{
		{"mod", "model", "permission-mode"},
		{"pm", "permission-mode", "compact"},
		{"main", "cmd/main.go", "internal/domain/anything.go"},
		{"tui", "cli/tui/model.go", "testutil/input.go"},
	} {
		b, okb := Fuzzy(tc.q, tc.better)
		w, okw := Fuzzy(tc.q, tc.worse)
		if !okb || (okw && w >= b) {
			t.Errorf("%q: %q scores %d (%v), %q scores %d (%v)", tc.q, tc.better, b, okb, tc.worse, w, okw)
		}
	}
	for _, tc := range []struct{ q, s string }{{"xyz", "model"}, {"ledom", "model"}, {"modell", "model"}} {
		if _, ok := Fuzzy(tc.q, tc.s); ok {
			t.Errorf("%q matches %q", tc.q, tc.s)
		}
	}
	if _, ok := Fuzzy("", "x"); !ok {
		t.Error("the empty query matches nothing")
	}
}

// FuzzFuzzy: any input is handled; a match means every rune of the
// query is in the text, in order, ignoring case.
func FuzzFuzzy(f *testing.F) {
	f.Add("mod", "model")
	f.Add("é", "café")
	f.Add("\xff", "a\xffb")
	f.Fuzz(func(t *testing.T, q, s string) {
		_, ok := Fuzzy(q, s)
		if !ok {
			return
		}
		rest := strings.ToLower(s)
		for _, r := range strings.ToLower(q) {
			i := strings.IndexRune(rest, r)
			if i < 0 {
				t.Fatalf("%q matched %q but %q is missing", q, s, r)
			}
			rest = rest[i+len(string(r)):]
		}
	})
}
