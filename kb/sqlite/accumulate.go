package sqlite

import "github.com/reinhq/rein/kb"

// maxDense is the widest span of chunk ids (the oldest live segment's
// first to the newest's last) whose scores a search gathers in an array
// indexed by id, as the memory backend does; a wider one (ids are never
// reused, so they grow with every re-index) gathers them in a map.
const maxDense = 1 << 21

// accumulator gathers a search's BM25 scores by chunk id.
type accumulator struct {
	lo      int64
	dense   []float64 // id − lo → score (0: not matched; a match scores above 0)
	sparse  map[int64]float64
	touched []int64
}

// scratch returns an accumulator for chunk ids lo … hi, pooled.
func (s *Store) scratch(lo, hi int64) *accumulator {
	a, _ := s.pool.Get().(*accumulator)
	if a == nil {
		a = &accumulator{}
	}
	a.lo, a.touched, a.sparse = lo, a.touched[:0], nil
	if span := hi - lo + 1; span > maxDense {
		a.sparse = map[int64]float64{}
	} else if int64(len(a.dense)) < span {
		a.dense = make([]float64, span)
	}
	return a
}

// release resets what a search touched and pools the accumulator.
func (s *Store) release(a *accumulator) {
	if a.sparse == nil {
		for _, id := range a.touched {
			a.dense[id-a.lo] = 0
		}
	}
	a.sparse = nil
	s.pool.Put(a)
}

// add adds a term's score to a chunk's.
func (a *accumulator) add(id int64, score float64) {
	if a.sparse != nil {
		if _, ok := a.sparse[id]; !ok {
			a.touched = append(a.touched, id)
		}
		a.sparse[id] += score
		return
	}
	if a.dense[id-a.lo] == 0 {
		a.touched = append(a.touched, id)
	}
	a.dense[id-a.lo] += score
}

func (a *accumulator) score(id int64) float64 {
	if a.sparse != nil {
		return a.sparse[id]
	}
	return a.dense[id-a.lo]
}

// best returns the k best chunks by score, best first, ties to the lower
// id.
func (a *accumulator) best(k int) []scoredID {
	return kb.BestK(k, len(a.touched), func(i int) scoredID {
		id := a.touched[i]
		return scoredID{id: id, score: a.score(id)}
	}, func(x, y scoredID) bool {
		if x.score != y.score {
			return x.score > y.score
		}
		return x.id < y.id
	})
}
