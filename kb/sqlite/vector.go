package sqlite

import (
	"context"
	"database/sql"
	"fmt"
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
	q := kb.Unit(vec)
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
		vc.add(cached{id: id, vec: kb.Unit(decode(blob))})
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

// scoredID is a chunk id with its score: a similarity, or a BM25 score
// (higher is better in both).
type scoredID struct {
	id    int64
	score float64
}

// nearest returns the k ids most similar to the unit vector q, best first;
// ties go to the lower id (the cache's order changes as chunks go).
func (vc *vectorCache) nearest(q []float32, k int) []scoredID {
	best := kb.Nearest(q, vc.vecs, k, func(i, j int) bool { return vc.ids[i] < vc.ids[j] })
	out := make([]scoredID, len(best))
	for i, b := range best {
		out[i] = scoredID{id: vc.ids[b.Index], score: b.Score}
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
