package kb

import "testing"

// FuzzMayHold checks annotate's filter never skips a line that holds a
// term: every term Terms(line) makes, mayHold finds.
func FuzzMayHold(f *testing.F) {
	for _, s := range []string{"func ReadFile(name string) ([]byte, error)", "HTTP_Server utf8 x", "naïve café 読み込み", "a_b_c", "\x80\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, term := range Terms(line) {
			if _, ok := mayHold(nil, line, []string{"zzzzqqq", term}); !ok {
				t.Fatalf("mayHold(%q) skips the line, which holds %q", line, term)
			}
		}
	})
}

func TestMayHoldSkipsLinesWithoutTerms_KB4(t *testing.T) {
	for _, tc := range []struct {
		line  string
		terms []string
		want  bool
	}{
		{"func ReadFile(name string)", []string{"readfile"}, true},
		{"func ReadFile(name string)", []string{"write"}, false},
		{"const max_retry_count = 3", []string{"retrycount"}, true},
		{"// nothing here", []string{"retry"}, false},
		{"// 読み込み", []string{"retry"}, true}, // not ASCII: analysed
	} {
		if _, got := mayHold(nil, tc.line, tc.terms); got != tc.want {
			t.Errorf("mayHold(%q, %q) = %v, want %v", tc.line, tc.terms, got, tc.want)
		}
	}
}
