package kb

import "math"

// BM25 parameters, as SQLite's FTS5 and rein's PostgreSQL backend use them.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// BM25IDF is the inverse document frequency every backend's BM25 weighs
// a term by, FTS5's: log((n - df + 0.5) / (df + 0.5)) for a term held by
// df of n chunks, and 1e-6 (next to nothing, but still a match) for a
// term in half the chunks or more. One formula, so that every backend
// ranks alike (kb/sqlite's bm25() cannot be given another).
func BM25IDF(n, df float64) float64 {
	idf := math.Log((n - df + 0.5) / (df + 0.5))
	if idf <= 0 {
		return 1e-6
	}
	return idf
}

// bm25Index is an inverted index scored by Okapi BM25: for each term, the
// chunks holding it and how often. Not safe for concurrent use: the memory
// backend guards it.
type bm25Index struct {
	postings map[string]map[int]int32 // term → chunk id → frequency
	lengths  map[int]int32            // chunk id → how many terms
	total    int64                    // Σ lengths
}

func newBM25() *bm25Index {
	return &bm25Index{postings: map[string]map[int]int32{}, lengths: map[int]int32{}}
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
	for t, n := range counts {
		p := x.postings[t]
		if p == nil {
			p = map[int]int32{}
			x.postings[t] = p
		}
		p[id] = n
	}
	x.lengths[id] = int32(length)
	x.total += int64(length)
}

// remove unindexes chunk id, which was added with these counts.
func (x *bm25Index) remove(id int, counts map[string]int32) {
	for t := range counts {
		p := x.postings[t]
		delete(p, id)
		if len(p) == 0 {
			delete(x.postings, t)
		}
	}
	x.total -= int64(x.lengths[id])
	delete(x.lengths, id)
}

// scored is a chunk id with its score.
type scored struct {
	id    int
	score float64
}

// search scores every chunk holding one of terms (each counted once), in
// no order.
func (x *bm25Index) search(terms []string) []scored {
	n := len(x.lengths)
	if n == 0 {
		return nil
	}
	avg := float64(x.total) / float64(n)
	if avg == 0 {
		avg = 1
	}
	scores := map[int]float64{}
	seen := map[string]bool{}
	for _, t := range terms {
		if seen[t] {
			continue
		}
		seen[t] = true
		p := x.postings[t]
		if len(p) == 0 {
			continue
		}
		df := float64(len(p))
		idf := BM25IDF(float64(n), df)
		for id, tf := range p {
			f := float64(tf)
			norm := 1 - bm25B + bm25B*float64(x.lengths[id])/avg
			scores[id] += idf * f * (bm25K1 + 1) / (f + bm25K1*norm)
		}
	}
	out := make([]scored, 0, len(scores))
	for id, s := range scores {
		out = append(out, scored{id, s})
	}
	return out
}
