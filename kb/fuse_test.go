package kb

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func hit(doc string, start, end int) Hit {
	return Hit{Chunk: Chunk{Doc: doc, Start: start, End: end}}
}

func TestFuse(t *testing.T) {
	kw := []Hit{hit("a", 1, 10), hit("b", 1, 10), hit("c", 1, 10)}
	vec := []Hit{hit("c", 1, 10), hit("d", 1, 10)}
	got := Fuse(kw, vec, Weights{Keyword: 1, Vector: 2}, 60)
	want := []Result{
		{Chunk: Chunk{Doc: "c", Start: 1, End: 10}, Score: 1.0/63 + 2.0/61, KeywordRank: 3, VectorRank: 1},
		{Chunk: Chunk{Doc: "d", Start: 1, End: 10}, Score: 2.0 / 62, VectorRank: 2},
		{Chunk: Chunk{Doc: "a", Start: 1, End: 10}, Score: 1.0 / 61, KeywordRank: 1},
		{Chunk: Chunk{Doc: "b", Start: 1, End: 10}, Score: 1.0 / 62, KeywordRank: 2},
	}
	approx := cmp.Comparer(func(x, y float64) bool { return math.Abs(x-y) < 1e-12 })
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("Fuse (-want +got):\n%s", diff)
	}
}

func TestFuseDefaults(t *testing.T) {
	got := Fuse([]Hit{hit("a", 1, 2)}, []Hit{hit("b", 1, 2)}, Weights{}, 0)
	if len(got) != 2 || got[0].Doc != "a" || math.Abs(got[0].Score-1.0/61) > 1e-12 || math.Abs(got[1].Score-1.0/61) > 1e-12 {
		t.Errorf("Fuse with defaults (vector 1, keyword 1, k 60) = %+v", got)
	}
}

// Overlapping chunks of one document collapse to the better one; chunks
// of other documents, or not overlapping, stay.
func TestFuseCollapse(t *testing.T) {
	kw := []Hit{hit("a", 1, 60), hit("a", 51, 110), hit("b", 51, 110), hit("a", 111, 170), hit("a", 1, 60)}
	got := Fuse(kw, nil, Weights{}, 60)
	var where []string
	for _, r := range got {
		where = append(where, r.Doc+":"+itoa(r.Start))
	}
	if diff := cmp.Diff([]string{"a:1", "b:51", "a:111"}, where); diff != "" {
		t.Errorf("Fuse collapse (-want +got):\n%s", diff)
	}
	if got[0].KeywordRank != 1 {
		t.Errorf("a chunk listed twice keeps its better rank: %d", got[0].KeywordRank)
	}
}

func itoa(n int) string { return thousands(int64(n)) }

// A pass's chunk list is ordered document by document, each document at
// its best chunk's place with at most perDoc chunks (KB-2, KB-4).
func TestByDocument_KB4(t *testing.T) {
	in := []Hit{hit("a", 1, 2), hit("a", 3, 4), hit("b", 1, 2), hit("a", 5, 6), hit("c", 1, 2), hit("b", 3, 4)}
	var where []string
	for _, h := range byDocument(in, 2) {
		where = append(where, h.Doc+":"+itoa(h.Start))
	}
	if diff := cmp.Diff([]string{"a:1", "a:3", "b:1", "b:3", "c:1"}, where); diff != "" {
		t.Errorf("byDocument (-want +got):\n%s", diff)
	}
	if got := byDocument(nil, 2); len(got) != 0 {
		t.Errorf("byDocument(nil) = %v", got)
	}
}
