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

// row is a chunk ready to insert: its terms joined, its vector encoded.
type row struct {
	chunk kb.Chunk
	terms string
	vec   []byte
	unit  []float32 // for the cache; nil without a vector
}

// entry is a document ready to write.
type entry struct {
	doc  kb.Document
	rows []row
}

// prepare checks an entry and analyses its chunks (outside the write
// lock: the analysis is the expensive part).
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
		r := row{chunk: c, terms: kb.JoinedChunkTerms(c)}
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

// PutBatch puts several documents in one transaction: all or none.
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
	err := s.write(ctx, func(tx *sql.Tx) (func(), error) {
		st, err := prepareStatements(ctx, tx)
		if err != nil {
			return nil, err
		}
		defer st.close()
		var d delta
		for _, e := range prepared {
			if err := st.put(ctx, e, &d); err != nil {
				if len(prepared) > 1 {
					err = fmt.Errorf("%s: %w", e.doc.Path, err)
				}
				return nil, err
			}
		}
		gen, err := bump(ctx, tx)
		if err != nil {
			return nil, err
		}
		return func() { s.apply(gen, d) }, nil
	})
	if err != nil {
		if len(entries) == 1 {
			return fmt.Errorf("kb %s: put: %w", entries[0].Doc.Path, err)
		}
		return fmt.Errorf("kb: put %d documents: %w", len(entries), err)
	}
	return nil
}

// statements are the prepared statements of a write.
type statements struct {
	chunkIDs, delTerms, delChunks, upsertDoc, insChunk, insTerms, insVec *sql.Stmt
}

func prepareStatements(ctx context.Context, tx *sql.Tx) (*statements, error) {
	st := &statements{}
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&st.chunkIDs, `SELECT id FROM chunks WHERE doc = ?`},
		{&st.delTerms, `DELETE FROM chunk_terms WHERE rowid = ?`},
		{&st.delChunks, `DELETE FROM chunks WHERE doc = ?`},
		{&st.upsertDoc, `INSERT INTO documents (path, hash, size, chunks, embedding, indexed) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (path) DO UPDATE SET hash = excluded.hash, size = excluded.size, chunks = excluded.chunks,
				embedding = excluded.embedding, indexed = excluded.indexed`},
		{&st.insChunk, `INSERT INTO chunks (doc, ord, start_line, end_line, heading, text) VALUES (?, ?, ?, ?, ?, ?)`},
		{&st.insTerms, `INSERT INTO chunk_terms (rowid, terms) VALUES (?, ?)`},
		{&st.insVec, `INSERT INTO vectors (chunk_id, dim, vec) VALUES (?, ?, ?)`},
	} {
		stmt, err := tx.PrepareContext(ctx, p.sql)
		if err != nil {
			st.close()
			return nil, err
		}
		*p.dst = stmt
	}
	return st, nil
}

func (st *statements) close() {
	for _, s := range []*sql.Stmt{st.chunkIDs, st.delTerms, st.delChunks, st.upsertDoc, st.insChunk, st.insTerms, st.insVec} {
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

// removeChunks deletes a document's chunks and their index entries; the
// vectors go with the chunks (ON DELETE CASCADE).
func (st *statements) removeChunks(ctx context.Context, path string, d *delta) (int, error) {
	rows, err := st.chunkIDs.QueryContext(ctx, path)
	if err != nil {
		return 0, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	for _, id := range ids {
		if _, err := st.delTerms.ExecContext(ctx, id); err != nil {
			return 0, fmt.Errorf("full-text index: %w", err)
		}
	}
	if _, err := st.delChunks.ExecContext(ctx, path); err != nil {
		return 0, err
	}
	d.removed = append(d.removed, ids...)
	return len(ids), nil
}

// put writes one document.
func (st *statements) put(ctx context.Context, e entry, d *delta) error {
	if _, err := st.removeChunks(ctx, e.doc.Path, d); err != nil {
		return err
	}
	doc := e.doc
	if _, err := st.upsertDoc.ExecContext(ctx, doc.Path, doc.Hash, doc.Size, doc.Chunks, doc.Embedding,
		doc.Indexed.UnixNano()); err != nil {
		return err
	}
	for i, r := range e.rows {
		res, err := st.insChunk.ExecContext(ctx, doc.Path, i, r.chunk.Start, r.chunk.End, r.chunk.Heading, r.chunk.Text)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		if _, err := st.insTerms.ExecContext(ctx, id, r.terms); err != nil {
			return fmt.Errorf("full-text index: %w", err)
		}
		if r.vec != nil {
			if _, err := st.insVec.ExecContext(ctx, id, len(r.vec)/4, r.vec); err != nil {
				return err
			}
			d.added = append(d.added, cached{id: id, vec: r.unit})
		}
	}
	return nil
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
		st, err := prepareStatements(ctx, tx)
		if err != nil {
			return nil, err
		}
		defer st.close()
		var d delta
		if _, err := st.removeChunks(ctx, path, &d); err != nil { // first: the index entries go by chunk id
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
		gen, err := bump(ctx, tx)
		if err != nil {
			return nil, err
		}
		return func() { s.apply(gen, d) }, nil
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
