package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/kb"
)

// Put replaces doc's chunks and vectors with these, in one transaction,
// and bumps the namespace's generation in it.
func (s *Store) Put(ctx context.Context, doc kb.Document, chunks []kb.Chunk, vectors [][]float32) error {
	return s.PutBatch(ctx, []kb.Entry{{Doc: doc, Chunks: chunks, Vectors: vectors}})
}

// PutBatch puts several documents in one transaction, all of them or
// none; a bad entry fails the batch before anything is written. The
// documents are written in path order, so concurrent batches take their
// rows' locks in one order and never deadlock.
func (s *Store) PutBatch(ctx context.Context, entries []kb.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	ps := make([]prepared, len(entries))
	for i, e := range entries {
		p, err := prepare(e)
		if err != nil {
			return fmt.Errorf("kb %s: put: %w", e.Doc.Path, err)
		}
		ps[i] = p
	}
	slices.SortStableFunc(ps, func(a, b prepared) int { return strings.Compare(a.doc.Path, b.doc.Path) })
	err := s.write(ctx, func(tx pgx.Tx) error {
		d := newDelta()
		for _, p := range ps {
			if err := s.put(ctx, tx, p, d); err != nil {
				if len(ps) > 1 {
					err = fmt.Errorf("%s: %w", p.doc.Path, err)
				}
				return err
			}
		}
		return s.apply(ctx, tx, d)
	})
	switch {
	case err == nil:
		return nil
	case len(ps) == 1:
		return fmt.Errorf("kb %s: put: %w", ps[0].doc.Path, err)
	}
	return fmt.Errorf("kb: put %d documents: %w", len(ps), err)
}

// put writes one document in tx and adds what it changes to d.
func (s *Store) put(ctx context.Context, tx pgx.Tx, p prepared, d *delta) error {
	doc := p.doc
	if _, err := tx.Exec(ctx, `INSERT INTO kb_documents (namespace, path, hash, size, chunks, embedding, indexed)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (namespace, path) DO UPDATE SET hash = EXCLUDED.hash, size = EXCLUDED.size,
			chunks = EXCLUDED.chunks, embedding = EXCLUDED.embedding, indexed = EXCLUDED.indexed`,
		s.ns, doc.Path, doc.Hash, doc.Size, len(p.rows), doc.Embedding, doc.Indexed.Truncate(time.Microsecond)); err != nil {
		return err
	}
	if err := s.deleteChunks(ctx, tx, doc.Path, d); err != nil {
		return err
	}
	var b pgx.Batch
	for _, r := range p.rows {
		d.add(r.terms, r.distinct, 1)
		b.Queue(`INSERT INTO kb_chunks (namespace, path, ord, start_line, end_line, heading, body, tsv, terms, vec)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text::tsvector, $9, $10)`,
			s.ns, doc.Path, r.ord, r.chunk.Start, r.chunk.End, r.chunk.Heading, r.chunk.Text, r.tsv, r.terms, r.vec)
	}
	return tx.SendBatch(ctx, &b).Close()
}

// Delete removes a document and its chunks in one transaction, and bumps
// the namespace's generation in it; kb.ErrNotFound when absent.
func (s *Store) Delete(ctx context.Context, path string) error {
	err := s.write(ctx, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM kb_documents WHERE namespace = $1 AND path = $2 FOR UPDATE`, s.ns, path).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return kb.ErrNotFound
		}
		if err != nil {
			return err
		}
		d := newDelta()
		if err := s.deleteChunks(ctx, tx, path, d); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM kb_documents WHERE namespace = $1 AND path = $2`, s.ns, path); err != nil {
			return err
		}
		return s.apply(ctx, tx, d)
	})
	if err != nil {
		return fmt.Errorf("kb %s: delete: %w", path, err)
	}
	return nil
}

// Drop removes every document of the namespace in one transaction. The
// namespace's generation goes on (it is never reused, or a cache of the
// old contents could pass for current).
func (s *Store) Drop(ctx context.Context) error {
	err := s.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM kb_documents WHERE namespace = $1`, s.ns); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM kb_terms WHERE namespace = $1`, s.ns); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE kb_namespaces SET generation = generation + 1, chunks = 0, terms = 0
			WHERE namespace = $1`, s.ns)
		return err
	})
	if err != nil {
		return fmt.Errorf("kb: drop namespace %q: %w", s.ns, err)
	}
	return nil
}

// Documents lists the namespace's documents, ordered by Path.
func (s *Store) Documents(ctx context.Context) ([]kb.Document, error) {
	rows, err := s.pool.Query(ctx, `SELECT path, hash, size, chunks, embedding, indexed
		FROM kb_documents WHERE namespace = $1 ORDER BY path`, s.ns)
	if err != nil {
		return nil, fmt.Errorf("kb: documents: %w", err)
	}
	docs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (kb.Document, error) {
		var d kb.Document
		err := r.Scan(&d.Path, &d.Hash, &d.Size, &d.Chunks, &d.Embedding, &d.Indexed)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("kb: documents: %w", err)
	}
	return docs, nil
}

// deleteChunks removes a document's chunks and subtracts them from d.
func (s *Store) deleteChunks(ctx context.Context, tx pgx.Tx, path string, d *delta) error {
	rows, err := tx.Query(ctx, `DELETE FROM kb_chunks WHERE namespace = $1 AND path = $2
		RETURNING terms, tsvector_to_array(tsv)`, s.ns, path)
	if err != nil {
		return err
	}
	var n int
	var lexemes []string
	_, err = pgx.ForEachRow(rows, []any{&n, &lexemes}, func() error {
		d.add(n, lexemes, -1)
		return nil
	})
	return err
}

// delta is what a write changes in the namespace's totals: its chunks,
// their terms, and how many chunks hold each term.
type delta struct {
	chunks, terms int64
	df            map[string]int64
}

func newDelta() *delta { return &delta{df: map[string]int64{}} }

// add counts a chunk of length terms with these distinct terms in
// (sign 1) or out (sign -1).
func (d *delta) add(terms int, distinct []string, sign int64) {
	d.chunks += sign
	d.terms += sign * int64(terms)
	for _, t := range distinct {
		d.df[t] += sign
	}
}

// apply writes d to kb_terms and kb_namespaces, bumping the generation.
// Term rows are updated in term order, so concurrent writers lock them in
// one order and never deadlock; the namespace's row, which every writer
// of the namespace takes, is last, held for the shortest time.
func (s *Store) apply(ctx context.Context, tx pgx.Tx, d *delta) error {
	terms := make([]string, 0, len(d.df))
	for t, n := range d.df {
		if n != 0 {
			terms = append(terms, t)
		}
	}
	slices.Sort(terms)
	counts := make([]int64, len(terms))
	gone := false
	for i, t := range terms {
		counts[i] = d.df[t]
		gone = gone || counts[i] < 0
	}
	if len(terms) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO kb_terms AS t (namespace, term, chunks)
			SELECT $1, u.term, u.n FROM unnest($2::text[], $3::bigint[]) u(term, n) ORDER BY u.term
			ON CONFLICT (namespace, term) DO UPDATE SET chunks = t.chunks + EXCLUDED.chunks`, s.ns, terms, counts); err != nil {
			return fmt.Errorf("term counts: %w", err)
		}
	}
	if gone {
		if _, err := tx.Exec(ctx, `DELETE FROM kb_terms WHERE namespace = $1 AND term = ANY($2::text[]) AND chunks <= 0`,
			s.ns, terms); err != nil {
			return fmt.Errorf("term counts: %w", err)
		}
	}
	return s.bump(ctx, tx, d.chunks, d.terms)
}

// bump advances the namespace's generation and its totals.
func (s *Store) bump(ctx context.Context, tx pgx.Tx, chunks, terms int64) error {
	_, err := tx.Exec(ctx, `INSERT INTO kb_namespaces AS n (namespace, generation, chunks, terms) VALUES ($1, 1, $2, $3)
		ON CONFLICT (namespace) DO UPDATE SET generation = n.generation + 1,
			chunks = n.chunks + EXCLUDED.chunks, terms = n.terms + EXCLUDED.terms`, s.ns, chunks, terms)
	return err
}

// prepared is a document checked and ready to write.
type prepared struct {
	doc  kb.Document
	rows []chunkRow
}

// chunkRow is a chunk ready to insert.
type chunkRow struct {
	ord      int
	chunk    kb.Chunk
	tsv      string
	terms    int      // how many
	distinct []string // which
	vec      []float32
}

// prepare checks what Put was given and computes each chunk's terms.
func prepare(e kb.Entry) (prepared, error) {
	doc := e.Doc
	if doc.Path == "" {
		return prepared{}, errors.New("the document has no path")
	}
	if err := errors.Join(text("path", doc.Path), text("hash", doc.Hash), text("embedding", doc.Embedding),
		kb.CheckVectors(len(e.Chunks), e.Vectors)); err != nil {
		return prepared{}, err
	}
	p := prepared{doc: doc, rows: make([]chunkRow, len(e.Chunks))}
	for i, c := range e.Chunks {
		if err := errors.Join(text("heading", c.Heading), text("text", c.Text)); err != nil {
			return prepared{}, fmt.Errorf("chunk %d (lines %d-%d): %w", i, c.Start, c.End, err)
		}
		c.Doc = doc.Path
		r := chunkRow{ord: i, chunk: c}
		r.tsv, r.terms, r.distinct = tsvector(kb.ChunkTerms(c))
		if e.Vectors != nil {
			r.vec = e.Vectors[i]
		}
		p.rows[i] = r
	}
	return p, nil
}

// text checks that s can be stored in a text column.
func text(what, s string) error {
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return fmt.Errorf("the %s is not UTF-8 text without NUL characters, which PostgreSQL cannot store: "+
			"index text files only", what)
	}
	return nil
}
