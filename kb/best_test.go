package kb

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// BestK returns what a full sort would put first, for every k and for
// lists with ties, in order (KB-4: the k best chunks of a search).
func TestBestK_KB4(t *testing.T) {
	type item struct {
		id    int
		score float64
	}
	better := func(a, b item) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return a.id < b.id
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, 50, 300} {
		items := make([]item, n)
		for i := range items {
			items[i] = item{id: i, score: float64(r.IntN(10))} // many ties
		}
		sorted := slices.Clone(items)
		slices.SortFunc(sorted, func(a, b item) int {
			if better(a, b) {
				return -1
			}
			return 1
		})
		for _, k := range []int{-1, 0, 1, 3, 10, n, n + 5} {
			got := BestK(k, n, func(i int) item { return items[i] }, better)
			want := sorted[:max(0, min(k, n))]
			if got == nil || !slices.Equal(got, want) {
				t.Errorf("n %d, k %d: got %v, want %v", n, k, got, want)
			}
		}
	}
}
