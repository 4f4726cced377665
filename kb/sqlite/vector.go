package sqlite

import (
	"container/heap"
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"

	"github.com/reinhq/rein/kb"
)

// vectorCache is the database's vectors at one generation, each scaled to
// unit length, for scoring in Go.
type vectorCache struct {
	gen  int64
	ids  []int64
	vecs [][]float32
	pos  map[int64]int // id → index in ids and vecs
}

// cached is one chunk's unit vector.
type cached struct {
	id  int64
	vec []float32
}

// Vector returns up to k chunks with vectors, best first by cosine
// similarity to vec; chunks whose vectors have another dimension are not
// compared. The first query loads every vector into memory; writes of
// this process keep the copy in step, and a write of another process (a
// new generation) makes the next query load it again.
func (s *Store) Vector(ctx context.Context, vec []float32, k int) ([]kb.Hit, error) {
	q := unit(vec)
	if q == nil || k < 1 {
		return nil, nil
	}
	hits, ok, err := s.vectorSearch(ctx, q, k, false)
	if err == nil && !ok {
		hits, _, err = s.vectorSearch(ctx, q, k, true)
	}
	if err != nil {
		return nil, fmt.Errorf("kb: vector search: %w", err)
	}
	return hits, nil
}

// vectorSearch runs a query in one read transaction. Without load it
// holds the cache's read lock and reports !ok when the cache is not of
// the database's generation; with load it holds the write lock and
// (re)loads the cache first.
func (s *Store) vectorSearch(ctx context.Context, q []float32, k int, load bool) ([]kb.Hit, bool, error) {
	if load {
		s.vmu.Lock()
		defer s.vmu.Unlock()
	} else {
		s.vmu.RLock()
		defer s.vmu.RUnlock()
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, false, err
	}
	defer tx.Rollback()
	var gen int64
	if err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'generation'`).Scan(&gen); err != nil {
		return nil, false, fmt.Errorf("generation: %w", err)
	}
	if s.vectors == nil || s.vectors.gen != gen {
		if !load {
			return nil, false, nil
		}
		vc, err := loadVectors(ctx, tx, gen)
		if err != nil {
			return nil, false, err
		}
		s.vectors = vc
	}
	best := s.vectors.nearest(q, k)
	hits, err := fetch(ctx, tx, best)
	return hits, true, err
}

// loadVectors reads every vector.
func loadVectors(ctx context.Context, tx *sql.Tx, gen int64) (*vectorCache, error) {
	rows, err := tx.QueryContext(ctx, `SELECT chunk_id, vec FROM vectors ORDER BY chunk_id`)
	if err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	defer rows.Close()
	vc := &vectorCache{gen: gen, pos: map[int64]int{}}
	for rows.Next() {
		var id int64
		var blob []byte
		if err := rows.Scan(&id, &blob); err != nil {
			return nil, fmt.Errorf("load vectors: %w", err)
		}
		vc.add(cached{id: id, vec: unit(decode(blob))})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	return vc, nil
}

func (vc *vectorCache) add(c cached) {
	if c.vec == nil {
		return
	}
	vc.pos[c.id] = len(vc.ids)
	vc.ids = append(vc.ids, c.id)
	vc.vecs = append(vc.vecs, c.vec)
}

func (vc *vectorCache) remove(id int64) {
	i, ok := vc.pos[id]
	if !ok {
		return
	}
	last := len(vc.ids) - 1
	vc.ids[i], vc.vecs[i] = vc.ids[last], vc.vecs[last]
	vc.pos[vc.ids[i]] = i
	vc.ids, vc.vecs = vc.ids[:last], vc.vecs[:last]
	delete(vc.pos, id)
}

// apply brings the cache from generation gen-1 to gen with a write's
// changes; a cache of another generation is dropped (it missed another
// process's write). The caller holds vmu's write lock.
func (s *Store) apply(gen int64, d delta) {
	vc := s.vectors
	if vc == nil {
		return
	}
	if vc.gen != gen-1 {
		s.vectors = nil
		return
	}
	for _, id := range d.removed {
		vc.remove(id)
	}
	for _, c := range d.added {
		vc.add(c)
	}
	vc.gen = gen
}

// scoredID is a chunk id with its similarity.
type scoredID struct {
	id    int64
	score float64
}

// minHeap keeps the best k scores seen, the worst on top.
type minHeap []scoredID

func (h minHeap) Len() int { return len(h) }
func (h minHeap) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return h[i].id > h[j].id
}
func (h minHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)   { *h = append(*h, x.(scoredID)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// nearest returns the k ids most similar to the unit vector q, best first.
func (vc *vectorCache) nearest(q []float32, k int) []scoredID {
	h := make(minHeap, 0, k+1)
	for i, v := range vc.vecs {
		if len(v) != len(q) {
			continue
		}
		sc := scoredID{id: vc.ids[i], score: dot(q, v)}
		if len(h) < k {
			heap.Push(&h, sc)
		} else if sc.score > h[0].score || (sc.score == h[0].score && sc.id < h[0].id) {
			h[0] = sc
			heap.Fix(&h, 0)
		}
	}
	out := make([]scoredID, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(scoredID)
	}
	return out
}

// fetch reads the chunks of best, in its order.
func fetch(ctx context.Context, tx *sql.Tx, best []scoredID) ([]kb.Hit, error) {
	if len(best) == 0 {
		return nil, nil
	}
	args := make([]any, len(best))
	index := make(map[int64]int, len(best))
	for i, b := range best {
		args[i] = b.id
		index[b.id] = i
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, doc, start_line, end_line, heading, text FROM chunks WHERE id IN (?`+
		strings.Repeat(", ?", len(best)-1)+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("chunks: %w", err)
	}
	defer rows.Close()
	found := make([]*kb.Hit, len(best))
	for rows.Next() {
		var id int64
		var h kb.Hit
		if err := rows.Scan(&id, &h.Doc, &h.Start, &h.End, &h.Heading, &h.Text); err != nil {
			return nil, fmt.Errorf("chunks: %w", err)
		}
		i := index[id]
		h.Score = best[i].score
		found[i] = &h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chunks: %w", err)
	}
	hits := make([]kb.Hit, 0, len(best))
	for _, h := range found {
		if h != nil {
			hits = append(hits, *h)
		}
	}
	return hits, nil
}

// unit returns v scaled to length 1, nil when v is empty or zero.
func unit(v []float32) []float32 {
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

// dot is the dot product of two vectors of one length.
func dot(a, b []float32) float64 {
	var s float32
	b = b[:len(a)]
	for i, x := range a {
		s += x * b[i]
	}
	return float64(s)
}
