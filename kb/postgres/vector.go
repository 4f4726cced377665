package postgres

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/kb"
)

// vectorCache holds one generation of the namespace's vectors, each
// scaled to unit length, for scoring in Go.
type vectorCache struct {
	gen  int64
	refs []chunkRef
	vecs [][]float32 // unit vectors; nil for a zero one
}

// chunkRef names a chunk: its document and its place in it.
type chunkRef struct {
	path string
	ord  int32
}

// Vector returns up to k chunks with vectors, best first by cosine
// similarity to vec; chunks whose vectors have another dimension than
// vec's are not compared.
func (s *Store) Vector(ctx context.Context, vec []float32, k int) ([]kb.Hit, error) {
	if len(vec) == 0 || k < 1 {
		return nil, nil
	}
	var hits []kb.Hit
	err := s.snapshot(ctx, func(tx pgx.Tx) error {
		gen, _, _, err := s.generation(ctx, tx)
		if err != nil {
			return err
		}
		vc, err := s.loadVectors(ctx, tx, gen)
		if err != nil {
			return err
		}
		best := vc.nearest(unit(vec), k)
		if len(best) == 0 {
			return nil
		}
		hits, err = s.fetch(ctx, tx, vc, best)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("kb: vector search: %w", err)
	}
	return hits, nil
}

// loadVectors returns the namespace's vectors at generation gen: the
// cache's when it is of that generation, else read in tx and cached
// (unless a newer generation is). Queries wait for one load rather than
// each loading.
func (s *Store) loadVectors(ctx context.Context, tx pgx.Tx, gen int64) (*vectorCache, error) {
	s.vmu.Lock()
	defer s.vmu.Unlock()
	if s.vectors != nil && s.vectors.gen == gen {
		return s.vectors, nil
	}
	rows, err := tx.Query(ctx, `SELECT path, ord, vec FROM kb_chunks
		WHERE namespace = $1 AND vec IS NOT NULL ORDER BY path, ord`, s.ns)
	if err != nil {
		return nil, err
	}
	vc := &vectorCache{gen: gen}
	var ref chunkRef
	var v []float32
	_, err = pgx.ForEachRow(rows, []any{&ref.path, &ref.ord, &v}, func() error {
		vc.refs = append(vc.refs, ref)
		vc.vecs = append(vc.vecs, unit(v))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if s.vectors == nil || s.vectors.gen < gen {
		s.vectors = vc
	}
	return vc, nil
}

// scored is a candidate of the vector pass.
type scored struct {
	i     int // index in the cache
	score float64
}

// nearest returns the indexes of the k vectors most similar to q (a unit
// vector), best first; ties go to the earlier chunk.
func (vc *vectorCache) nearest(q []float32, k int) []scored {
	if q == nil {
		return nil
	}
	h := &minHeap{}
	for i, v := range vc.vecs {
		if len(v) != len(q) {
			continue
		}
		c := scored{i: i, score: dot(q, v)}
		if h.Len() < k {
			heap.Push(h, c)
		} else if worse((*h)[0], c) {
			(*h)[0] = c
			heap.Fix(h, 0)
		}
	}
	out := slices.Clone(*h)
	slices.SortFunc(out, func(a, b scored) int {
		if worse(a, b) {
			return 1
		}
		return -1
	})
	return out
}

// worse reports whether a ranks below b.
func worse(a, b scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.i > b.i
}

// minHeap keeps the worst of the best k at its top.
type minHeap []scored

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return worse(h[i], h[j]) }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// fetch reads the chunks of best, in best's order, with their scores.
func (s *Store) fetch(ctx context.Context, tx pgx.Tx, vc *vectorCache, best []scored) ([]kb.Hit, error) {
	paths := make([]string, len(best))
	ords := make([]int32, len(best))
	for i, b := range best {
		paths[i], ords[i] = vc.refs[b.i].path, vc.refs[b.i].ord
	}
	rows, err := tx.Query(ctx, `SELECT c.path, c.ord, c.start_line, c.end_line, c.heading, c.body
		FROM unnest($2::text[], $3::int[]) w(path, ord)
		JOIN kb_chunks c ON c.namespace = $1 AND c.path = w.path AND c.ord = w.ord`, s.ns, paths, ords)
	if err != nil {
		return nil, err
	}
	byRef := map[chunkRef]kb.Chunk{}
	var ref chunkRef
	var c kb.Chunk
	if _, err := pgx.ForEachRow(rows, []any{&ref.path, &ref.ord, &c.Start, &c.End, &c.Heading, &c.Text}, func() error {
		c.Doc = ref.path
		byRef[ref] = c
		return nil
	}); err != nil {
		return nil, err
	}
	hits := make([]kb.Hit, 0, len(best))
	for _, b := range best {
		if c, ok := byRef[vc.refs[b.i]]; ok { // read in the same snapshot: always there
			hits = append(hits, kb.Hit{Chunk: c, Score: b.score})
		}
	}
	return hits, nil
}

// unit returns v scaled to length 1, or nil when v is zero or not finite.
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return nil
	}
	n = math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

// dot is the dot product of two vectors of one length.
func dot(a, b []float32) float64 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return float64(s)
}
