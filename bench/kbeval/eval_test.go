package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestRankOf(t *testing.T) {
	files := []string{"bufio/scan.go", "bufio/bufio.go"}
	for _, tc := range []struct {
		name string
		docs []string
		want int
	}{
		{"first", []string{"bufio/scan.go", "os/file.go"}, 1},
		{"second label counts", []string{"os/file.go", "io/io.go", "bufio/bufio.go"}, 3},
		{"first of several hits", []string{"os/file.go", "bufio/bufio.go", "bufio/scan.go"}, 2},
		{"missed", []string{"os/file.go", "io/io.go"}, 0},
		{"no hits", nil, 0},
	} {
		if got := rankOf(files, tc.docs); got != tc.want {
			t.Errorf("%s: rankOf = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestScore(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ranks []int
		want  Score
	}{
		{"none", nil, Score{}},
		// Ranks 1, 2, 6, missed: recall@5 2/4, recall@10 3/4, MRR (1 + 1/2 + 1/6 + 0)/4.
		{"mixed", []int{1, 2, 6, 0}, Score{Questions: 4, Recall5: 0.5, Recall10: 0.75, MRR: (1 + 0.5 + 1.0/6) / 4}},
		{"all first", []int{1, 1}, Score{Questions: 2, Recall5: 1, Recall10: 1, MRR: 1}},
		{"beyond ten counts in MRR only", []int{20}, Score{Questions: 1, MRR: 0.05}},
	} {
		if diff := cmp.Diff(tc.want, score(tc.ranks), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
			t.Errorf("%s: score (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestWithin(t *testing.T) {
	qs := []Question{
		{ID: "a", Files: []string{"net/http/server.go", "net/textproto/reader.go"}},
		{ID: "b", Files: []string{"bufio/scan.go"}},
	}
	want := []Question{{ID: "a", Files: []string{"net/http/server.go"}}}
	if diff := cmp.Diff(want, within(qs, "net/http/")); diff != "" {
		t.Errorf("within net/http (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(qs, within(qs, ".")); diff != "" {
		t.Errorf("within . (-want +got):\n%s", diff)
	}
}

func TestParseQuestions(t *testing.T) {
	for name, data := range map[string]string{
		"not json":     `{`,
		"no id":        `[{"question": "q", "files": ["a.go"]}]`,
		"duplicate id": `[{"id": "a", "question": "q", "files": ["a.go"]}, {"id": "a", "question": "r", "files": ["b.go"]}]`,
		"no question":  `[{"id": "a", "question": " ", "files": ["a.go"]}]`,
		"no file":      `[{"id": "a", "question": "q"}]`,
		"absolute":     `[{"id": "a", "question": "q", "files": ["/etc/passwd"]}]`,
		"escapes":      `[{"id": "a", "question": "q", "files": ["../x.go"]}]`,
		"unclean":      `[{"id": "a", "question": "q", "files": ["net//x.go"]}]`,
	} {
		if _, err := parseQuestions([]byte(data)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// Every labelled file of every corpus exists in the corpus as this
// machine builds it, and the sets are as large as SPEC KB-4 asks: at
// least 150 questions over two corpora.
func TestQuestionLabels_KB4(t *testing.T) {
	total := 0
	for _, c := range corpora {
		data, err := questionFiles.ReadFile("questions/" + c.name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		qs, err := parseQuestions(data)
		if err != nil {
			t.Fatal(err)
		}
		total += len(qs)
		root, cleanup, err := c.build()
		if err != nil {
			t.Skipf("environment: corpus %s cannot be built on this machine (GOROOT or the module cache lacks its files): %v", c.name, err)
		}
		for _, q := range qs {
			for _, f := range q.Files {
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(f))); err != nil {
					t.Errorf("%s %s: %v", c.name, q.ID, err)
				}
			}
		}
		cleanup()
		held := len(splitOf(qs, splitHeldOut))
		if tune := len(splitOf(qs, splitTune)); held+tune != len(qs) || held < len(qs)/3 || tune < len(qs)/3 {
			t.Errorf("%s: %d held out and %d to tune of %d: want two halves of about the same size", c.name, held, tune, len(qs))
		}
	}
	if total < 150 {
		t.Errorf("%d questions, want at least 150", total)
	}
}

func TestDistinctAndPercentile(t *testing.T) {
	if got := distinct([]string{"a", "a", "b", "a", "c", "d"}, 3); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("distinct = %v, want [a b c]", got)
	}
	times := make([]time.Duration, 100)
	for i := range times {
		times[i] = time.Duration(100-i) * time.Millisecond
	}
	if p50, p99 := percentile(times, 0.5), percentile(times, 0.99); p50 != 50 || p99 != 99 {
		t.Errorf("p50, p99 = %v, %v; want 50, 99", p50, p99)
	}
	if percentile(nil, 0.99) != 0 {
		t.Error("percentile of none is not 0")
	}
}

func FuzzParseQuestions(f *testing.F) {
	data, err := questionFiles.ReadFile("questions/goroot.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(data))
	f.Add(`[{"id": "a", "question": "q", "files": ["a.go"]}]`)
	f.Add(`[{"id": "a", "question": "q", "files": [".."]}]`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, data string) {
		qs, err := parseQuestions([]byte(data))
		if err != nil {
			return
		}
		for _, q := range qs {
			if q.ID == "" || len(q.Files) == 0 {
				t.Fatalf("accepted %+v", q)
			}
		}
	})
}
