package postgres

import (
	"context"
	"fmt"

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
		best := vc.nearest(kb.Unit(vec), k)
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
		vc.vecs = append(vc.vecs, kb.Unit(v))
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

// nearest returns the k vectors most similar to q (a unit vector), best
// first; ties go to the earlier chunk.
func (vc *vectorCache) nearest(q []float32, k int) []kb.Scored {
	return kb.Nearest(q, vc.vecs, k, func(i, j int) bool { return i < j })
}

// fetch reads the chunks of best, in best's order, with their scores.
func (s *Store) fetch(ctx context.Context, tx pgx.Tx, vc *vectorCache, best []kb.Scored) ([]kb.Hit, error) {
	paths := make([]string, len(best))
	ords := make([]int32, len(best))
	for i, b := range best {
		paths[i], ords[i] = vc.refs[b.Index].path, vc.refs[b.Index].ord
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
		if c, ok := byRef[vc.refs[b.Index]]; ok { // read in the same snapshot: always there
			hits = append(hits, kb.Hit{Chunk: c, Score: b.Score})
		}
	}
	return hits, nil
}
