package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/reinhq/rein/kb"
)

// row is a chunk ready to insert: its length (how many terms), its
// vector encoded.
type row struct {
	chunk  kb.Chunk
	length int
	vec    []byte
	unit   []float32 // for the cache; nil without a vector
}

// entry is a document ready to write.
type entry struct {
	doc  kb.Document
	rows []row
}

// prepare checks an entry and encodes its vectors.
func prepare(e kb.Entry) (entry, error) {
	if e.Doc.Path == "" {
		return entry{}, errors.New("kb: put: the document has no path")
	}
	if err := kb.CheckVectors(len(e.Chunks), e.Vectors); err != nil {
		return entry{}, fmt.Errorf("kb %s: put: %w", e.Doc.Path, err)
	}
	out := entry{doc: e.Doc, rows: make([]row, len(e.Chunks))}
	out.doc.Chunks = len(e.Chunks)
	for i, c := range e.Chunks {
		c.Doc = e.Doc.Path
		r := row{chunk: c}
		if e.Vectors != nil {
			r.vec = encode(e.Vectors[i])
			r.unit = kb.Unit(e.Vectors[i])
		}
		out.rows[i] = r
	}
	return out, nil
}

// Put replaces a document's chunks and vectors in one transaction.
func (s *Store) Put(ctx context.Context, doc kb.Document, chunks []kb.Chunk, vectors [][]float32) error {
	return s.PutBatch(ctx, []kb.Entry{{Doc: doc, Chunks: chunks, Vectors: vectors}})
}

// PutBatch puts several documents in one transaction: all or none. The
// chunks' posting lists are made before the write lock is taken (the
// analysis is the expensive part) and written as one new segment.
func (s *Store) PutBatch(ctx context.Context, entries []kb.Entry) error {
	prepared := make([]entry, len(entries))
	for i, e := range entries {
		p, err := prepare(e)
		if err != nil {
			return err
		}
		prepared[i] = p
	}
	if len(prepared) == 0 {
		return nil
	}
	// A path put twice ends as its last put: the earlier ones are not
	// written at all.
	last := make(map[string]int, len(prepared))
	for i, e := range prepared {
		last[e.doc.Path] = i
	}
	kept := prepared[:0]
	for i, e := range prepared {
		if last[e.doc.Path] == i {
			kept = append(kept, e)
		}
	}
	bp := newBatchPostings()
	for _, e := range kept {
		for i := range e.rows {
			terms := kb.ChunkTerms(e.rows[i].chunk)
			e.rows[i].length = len(terms)
			bp.add(terms)
		}
	}
	err := s.write(ctx, func(tx *sql.Tx) (func(), error) {
		w, err := begin(ctx, tx)
		if err != nil {
			return nil, err
		}
		defer w.close()
		for _, e := range kept {
			if err := w.put(e); err != nil {
				if len(kept) > 1 {
					err = fmt.Errorf("%s: %w", e.doc.Path, err)
				}
				return nil, err
			}
		}
		if err := writeSegment(ctx, tx, w.insBlock, bp, w.added); err != nil {
			return nil, err
		}
		gen, err := w.finish()
		if err != nil {
			return nil, err
		}
		return func() { s.apply(gen, w.delta) }, nil
	})
	if err != nil {
		if len(entries) == 1 {
			return fmt.Errorf("kb %s: put: %w", entries[0].Doc.Path, err)
		}
		return fmt.Errorf("kb: put %d documents: %w", len(entries), err)
	}
	return nil
}

// writer is a write transaction in progress: its prepared statements,
// the segments as it found them (kept up to date), and what it changed
// of the index's totals and the vectors.
type writer struct {
	ctx  context.Context
	tx   *sql.Tx
	segs []segment
	// next is the next chunk id; chunks and length what the write
	// changes of the live chunks' count and total length.
	next, chunks, length int64
	added                []int64 // the new chunks' ids, ascending
	delta                delta

	chunkIDs, delChunks, upsertDoc, insChunk, insVec, insBlock *sql.Stmt
}

// begin prepares a write in tx.
func begin(ctx context.Context, tx *sql.Tx) (*writer, error) {
	w := &writer{ctx: ctx, tx: tx}
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&w.chunkIDs, `SELECT id, length FROM chunks WHERE doc = ?`},
		{&w.delChunks, `DELETE FROM chunks WHERE doc = ?`},
		{&w.upsertDoc, `INSERT INTO documents (path, hash, size, chunks, embedding, indexed) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (path) DO UPDATE SET hash = excluded.hash, size = excluded.size, chunks = excluded.chunks,
				embedding = excluded.embedding, indexed = excluded.indexed`},
		{&w.insChunk, `INSERT INTO chunks (id, doc, ord, start_line, end_line, heading, text, length) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`},
		{&w.insVec, `INSERT INTO vectors (chunk_id, dim, vec) VALUES (?, ?, ?)`},
		{&w.insBlock, `INSERT INTO postings (seg, first, data) VALUES (?, ?, ?)`},
	} {
		stmt, err := tx.PrepareContext(ctx, p.sql)
		if err != nil {
			w.close()
			return nil, err
		}
		*p.dst = stmt
	}
	m, err := readMeta(ctx, tx)
	if err != nil {
		w.close()
		return nil, err
	}
	if m.stale {
		w.close()
		return nil, errStale
	}
	w.next = m.next
	if w.segs, err = loadSegments(ctx, tx); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

func (w *writer) close() {
	for _, s := range []*sql.Stmt{w.chunkIDs, w.delChunks, w.upsertDoc, w.insChunk, w.insVec, w.insBlock} {
		if s != nil {
			s.Close()
		}
	}
}

// delta is what a write changed of the vectors, for the cache.
type delta struct {
	removed []int64
	added   []cached
}

// remove deletes a document's chunks (the vectors go with them: ON
// DELETE CASCADE) and lists them as dead in their segments.
func (w *writer) remove(path string) error {
	rows, err := w.chunkIDs.QueryContext(w.ctx, path)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id, length int64
		if err := rows.Scan(&id, &length); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
		w.chunks--
		w.length -= length
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	if err := markDead(w.ctx, w.tx, w.segs, ids); err != nil {
		return err
	}
	if _, err := w.delChunks.ExecContext(w.ctx, path); err != nil {
		return err
	}
	w.delta.removed = append(w.delta.removed, ids...)
	return nil
}

// put writes one document, its chunks taking the next ids.
func (w *writer) put(e entry) error {
	if err := w.remove(e.doc.Path); err != nil {
		return err
	}
	doc := e.doc
	if _, err := w.upsertDoc.ExecContext(w.ctx, doc.Path, doc.Hash, doc.Size, doc.Chunks, doc.Embedding,
		doc.Indexed.UnixNano()); err != nil {
		return err
	}
	for i, r := range e.rows {
		id := w.next
		w.next++
		if _, err := w.insChunk.ExecContext(w.ctx, id, doc.Path, i, r.chunk.Start, r.chunk.End, r.chunk.Heading, r.chunk.Text, r.length); err != nil {
			return err
		}
		w.added = append(w.added, id)
		w.chunks++
		w.length += int64(r.length)
		if r.vec != nil {
			if _, err := w.insVec.ExecContext(w.ctx, id, len(r.vec)/4, r.vec); err != nil {
				return err
			}
			w.delta.added = append(w.delta.added, cached{id: id, vec: r.unit})
		}
	}
	return nil
}

// finish merges segments as needed, records the totals and the next
// chunk id, and advances the generation, which it returns. The caller
// has written the new chunks' segment.
func (w *writer) finish() (int64, error) {
	segs, err := loadSegments(w.ctx, w.tx)
	if err != nil {
		return 0, err
	}
	if _, err := compact(w.ctx, w.tx, w.insBlock, segs); err != nil {
		return 0, fmt.Errorf("merge segments: %w", err)
	}
	if _, err := w.tx.ExecContext(w.ctx, `UPDATE meta SET value = CASE key
		WHEN 'chunks' THEN value + ? WHEN 'length' THEN value + ? ELSE ? END
		WHERE key IN ('chunks', 'length', 'next_chunk')`, w.chunks, w.length, w.next); err != nil {
		return 0, fmt.Errorf("totals: %w", err)
	}
	return bump(w.ctx, w.tx)
}

// bump advances the generation and returns the new one.
func bump(ctx context.Context, tx *sql.Tx) (int64, error) {
	var gen int64
	err := tx.QueryRowContext(ctx, `UPDATE meta SET value = value + 1 WHERE key = 'generation' RETURNING value`).Scan(&gen)
	if err != nil {
		return 0, fmt.Errorf("generation: %w", err)
	}
	return gen, nil
}

// Delete removes a document and its chunks in one transaction;
// kb.ErrNotFound when absent.
func (s *Store) Delete(ctx context.Context, path string) error {
	err := s.write(ctx, func(tx *sql.Tx) (func(), error) {
		w, err := begin(ctx, tx)
		if err != nil {
			return nil, err
		}
		defer w.close()
		if err := w.remove(path); err != nil {
			return nil, err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE path = ?`, path)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, err
		} else if n == 0 {
			return nil, kb.ErrNotFound
		}
		gen, err := w.finish()
		if err != nil {
			return nil, err
		}
		return func() { s.apply(gen, w.delta) }, nil
	})
	if err != nil {
		return fmt.Errorf("kb %s: delete: %w", path, err)
	}
	return nil
}

// Documents lists the documents by path (byte order).
func (s *Store) Documents(ctx context.Context) ([]kb.Document, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT path, hash, size, chunks, embedding, indexed FROM documents ORDER BY path`)
	if err != nil {
		return nil, fmt.Errorf("kb: documents: %w", err)
	}
	defer rows.Close()
	var out []kb.Document
	for rows.Next() {
		var d kb.Document
		var indexed int64
		if err := rows.Scan(&d.Path, &d.Hash, &d.Size, &d.Chunks, &d.Embedding, &indexed); err != nil {
			return nil, fmt.Errorf("kb: documents: %w", err)
		}
		d.Indexed = time.Unix(0, indexed).UTC()
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("kb: documents: %w", err)
	}
	return out, nil
}

// encode writes a vector as little-endian float32s.
func encode(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decode reads a vector encode wrote; nil when the blob is not one.
func decode(b []byte) []float32 {
	if len(b)%4 != 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
