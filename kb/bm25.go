package kb

import (
	"math"
	"slices"
	"sync"
)

// BM25 parameters, as every backend uses them (SQLite FTS5's own).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// BM25IDF is the inverse document frequency every backend's BM25 weighs
// a term by, FTS5's: log((n - df + 0.5) / (df + 0.5)) for a term held by
// df of n chunks, and 1e-6 (next to nothing, but still a match) for a
// term in half the chunks or more. One formula, so that every backend
// ranks alike.
func BM25IDF(n, df float64) float64 {
	idf := math.Log((n - df + 0.5) / (df + 0.5))
	if idf <= 0 {
		return 1e-6
	}
	return idf
}

// BM25LengthScale is what BM25Score scales a chunk's length by: b over
// the average length of n chunks holding total terms (an average of 0
// counts as 1).
func BM25LengthScale(total, n float64) float64 {
	avg := total / n
	if avg == 0 {
		avg = 1
	}
	return bm25B / avg
}

// BM25Score is what a term of idf (BM25IDF) adds to the score of a chunk
// holding it tf times among length terms; scale is BM25LengthScale. One
// formula, so that every backend computing in Go ranks alike to the bit.
func BM25Score(idf, scale float64, tf, length int32) float64 {
	f := float64(tf)
	norm := 1 - bm25B + scale*float64(length)
	return idf * f * (bm25K1 + 1) / (f + bm25K1*norm)
}

// posting is one chunk holding a term, and how often.
type posting struct {
	id int32
	tf int32
}

// bm25Index is an inverted index scored by Okapi BM25: for each term, the
// chunks holding it (by ascending id) and how often. Chunk ids are small
// integers handed out in increasing order, so a search accumulates scores
// in an array indexed by id rather than a map. Not safe for concurrent
// writes: the memory backend guards it; searches may run alongside each
// other.
type bm25Index struct {
	postings map[string][]posting
	lengths  []int32 // chunk id → how many terms; 0 for no chunk
	live     int     // how many chunks
	total    int64   // Σ lengths
	acc      sync.Pool
}

func newBM25() *bm25Index {
	return &bm25Index{postings: map[string][]posting{}}
}

// termCounts counts a chunk's terms.
func termCounts(terms []string) map[string]int32 {
	counts := make(map[string]int32, len(terms))
	for _, t := range terms {
		counts[t]++
	}
	return counts
}

// add indexes chunk id under its term counts and length.
func (x *bm25Index) add(id int, counts map[string]int32, length int) {
	p := posting{id: int32(id)}
	for t, n := range counts {
		list := x.postings[t]
		p.tf = n
		if len(list) == 0 || list[len(list)-1].id < p.id {
			x.postings[t] = append(list, p)
			continue
		}
		i, _ := slices.BinarySearchFunc(list, p.id, postingCmp)
		x.postings[t] = slices.Insert(list, i, p)
	}
	if id >= len(x.lengths) {
		x.lengths = append(x.lengths, make([]int32, id+1-len(x.lengths))...)
	}
	x.lengths[id] = int32(length)
	x.total += int64(length)
	x.live++
}

func postingCmp(p posting, id int32) int { return int(p.id - id) }

// remove unindexes chunk id, which was added with these counts.
func (x *bm25Index) remove(id int, counts map[string]int32) {
	for t := range counts {
		list := x.postings[t]
		i, ok := slices.BinarySearchFunc(list, int32(id), postingCmp)
		if !ok {
			continue
		}
		if list = slices.Delete(list, i, i+1); len(list) == 0 {
			delete(x.postings, t)
		} else {
			x.postings[t] = list
		}
	}
	x.total -= int64(x.lengths[id])
	x.lengths[id] = 0
	x.live--
}

// scored is a chunk id with its score.
type scored struct {
	id    int
	score float64
}

// accumulator is a search's scratch: a score for every chunk id (0: not
// matched; a match always scores above 0) and the ids it touched.
type accumulator struct {
	scores  []float64
	touched []int32
}

// search returns the k chunks holding one of terms (each counted once)
// that score best, best first; less breaks ties between equal scores
// (it reports whether chunk a ranks before chunk b).
func (x *bm25Index) search(terms []string, k int, less func(a, b int) bool) []scored {
	if x.live == 0 || k < 1 {
		return nil
	}
	n := float64(x.live)
	scale := BM25LengthScale(float64(x.total), n)
	acc, _ := x.acc.Get().(*accumulator)
	if acc == nil {
		acc = &accumulator{}
	}
	if len(acc.scores) < len(x.lengths) {
		acc.scores = make([]float64, len(x.lengths))
	}
	scores, touched := acc.scores, acc.touched[:0]
	for i, t := range terms {
		list := x.postings[t]
		if len(list) == 0 || slices.Contains(terms[:i], t) {
			continue
		}
		idf := BM25IDF(n, float64(len(list)))
		for _, p := range list {
			if scores[p.id] == 0 {
				touched = append(touched, p.id)
			}
			scores[p.id] += BM25Score(idf, scale, p.tf, x.lengths[p.id])
		}
	}
	top := topK(scores, touched, k, less)
	for _, id := range touched {
		scores[id] = 0
	}
	acc.touched = touched
	x.acc.Put(acc)
	return top
}

// topK selects the k best of the touched ids by score (ties by less),
// best first.
func topK(scores []float64, touched []int32, k int, less func(a, b int) bool) []scored {
	return BestK(k, len(touched), func(i int) scored {
		id := touched[i]
		return scored{int(id), scores[id]}
	}, func(a, b scored) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return less(a.id, b.id)
	})
}
