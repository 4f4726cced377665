package kb

import (
	"container/heap"
	"math"
)

// Vector arithmetic the backends share: each keeps unit vectors and scores
// a query by dot product (cosine similarity).

// Unit returns v scaled to length 1, or nil when v is empty, zero or not
// finite (such a vector is never compared).
func Unit(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return nil
	}
	inv := 1 / math.Sqrt(sum)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// Dot is the dot product of a and b; b is at least as long as a.
func Dot(a, b []float32) float64 {
	var s float32
	b = b[:len(a)]
	for i, x := range a {
		s += x * b[i]
	}
	return float64(s)
}

// Scored is a vector of a list, by its index, with its similarity to a
// query.
type Scored struct {
	Index int
	Score float64
}

// Nearest returns the k vectors of vecs most similar to the unit vector
// q, best first; vectors of another dimension than q's are skipped. On
// equal scores before(i, j) says whether vector i ranks before vector j.
// It keeps k candidates at a time, not all of vecs.
func Nearest(q []float32, vecs [][]float32, k int, before func(i, j int) bool) []Scored {
	if q == nil || k < 1 {
		return nil
	}
	h := &scoredHeap{before: before}
	for i, v := range vecs {
		if len(v) != len(q) {
			continue
		}
		c := Scored{Index: i, Score: Dot(q, v)}
		if len(h.s) < k {
			heap.Push(h, c)
		} else if h.worse(h.s[0], c) {
			h.s[0] = c
			heap.Fix(h, 0)
		}
	}
	out := make([]Scored, len(h.s))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(Scored)
	}
	return out
}

// scoredHeap keeps the best candidates seen, the worst on top.
type scoredHeap struct {
	s      []Scored
	before func(i, j int) bool
}

// worse reports whether a ranks below b.
func (h *scoredHeap) worse(a, b Scored) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return h.before(b.Index, a.Index)
}

func (h *scoredHeap) Len() int           { return len(h.s) }
func (h *scoredHeap) Less(i, j int) bool { return h.worse(h.s[i], h.s[j]) }
func (h *scoredHeap) Swap(i, j int)      { h.s[i], h.s[j] = h.s[j], h.s[i] }
func (h *scoredHeap) Push(x any)         { h.s = append(h.s, x.(Scored)) }
func (h *scoredHeap) Pop() any {
	x := h.s[len(h.s)-1]
	h.s = h.s[:len(h.s)-1]
	return x
}
