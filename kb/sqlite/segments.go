package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/bits"
	"slices"
	"sort"
)

// Segments: a write's new chunks get one segment of posting lists (their
// ids are consecutive: lo … hi), a removed chunk is listed as dead in the
// segment holding it, and adjacent segments are merged (dropping the dead
// chunks' postings) so that a term is looked up in a few segments only:
// mergeFanout segments of one size class (level) are merged into one, a
// segment a quarter dead is rewritten, and never more than maxSegments
// are kept. Every step runs in the write's own transaction.

const (
	// mergeFanout adjacent segments of one level are merged into one.
	mergeFanout = 4
	// maxSegments bounds how many segments a term is looked up in.
	maxSegments = 12
)

// batchPostings are the posting lists of a write's new chunks, chunks
// numbered by ordinal (0, 1, … in the order they were added).
type batchPostings struct {
	terms   map[string][]localPosting
	lengths []int32 // ordinal → how many terms
}

// localPosting is a chunk of a batch, by ordinal, holding a term tf
// times.
type localPosting struct{ ord, tf int32 }

func newBatchPostings() *batchPostings {
	return &batchPostings{terms: map[string][]localPosting{}}
}

// add indexes the next chunk under its terms (kb.ChunkTerms: repeated
// terms count as often as they occur).
func (bp *batchPostings) add(terms []string) {
	ord := int32(len(bp.lengths))
	bp.lengths = append(bp.lengths, int32(len(terms)))
	for _, t := range terms {
		list := bp.terms[t]
		if n := len(list); n > 0 && list[n-1].ord == ord {
			list[n-1].tf++
			continue
		}
		bp.terms[t] = append(list, localPosting{ord: ord, tf: 1})
	}
}

// segment is a row of segments, its dead chunks decoded.
type segment struct {
	id, lo, hi    int64
	chunks, ndead int
	dead          []int64 // ascending
}

// live is how many of its chunks are not dead.
func (s segment) live() int { return s.chunks - s.ndead }

// level is its size class: its live chunks by powers of 4 (so that
// mergeFanout segments of one level make about one of the next).
func (s segment) level() int { return bits.Len(uint(s.live())) / 2 }

// querier is a *sql.Tx or a *sql.DB.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// loadSegments reads the segments in order of their chunk ids.
func loadSegments(ctx context.Context, q querier) ([]segment, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, lo, hi, chunks, ndead, dead FROM segments ORDER BY lo`)
	if err != nil {
		return nil, fmt.Errorf("segments: %w", err)
	}
	defer rows.Close()
	var out []segment
	for rows.Next() {
		var s segment
		var dead []byte
		if err := rows.Scan(&s.id, &s.lo, &s.hi, &s.chunks, &s.ndead, &dead); err != nil {
			return nil, fmt.Errorf("segments: %w", err)
		}
		if s.dead, err = decodeIDs(dead); err != nil {
			return nil, fmt.Errorf("segment %d: %w", s.id, err)
		}
		if len(s.dead) != s.ndead || s.lo > s.hi || s.chunks < s.ndead ||
			len(out) > 0 && out[len(out)-1].hi >= s.lo {
			return nil, fmt.Errorf("segment %d: %w", s.id, errCorrupt)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("segments: %w", err)
	}
	return out, nil
}

// blockWriter cuts a segment's entries into blocks and inserts them.
type blockWriter struct {
	ctx   context.Context
	ins   *sql.Stmt
	seg   int64
	buf   []byte
	first []byte
}

// entry appends a term's entry (its list already encoded).
func (w *blockWriter) entry(term []byte, count int, list []byte) error {
	if len(w.buf) == 0 {
		w.first = append(w.first[:0], term...)
	}
	w.buf = appendEncodedEntry(w.buf, term, count, list)
	if len(w.buf) >= blockTarget {
		return w.flush()
	}
	return nil
}

func (w *blockWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.ins.ExecContext(w.ctx, w.seg, w.first, w.buf); err != nil {
		return fmt.Errorf("postings: %w", err)
	}
	w.buf = w.buf[:0]
	return nil
}

// insertSegment adds a segment row and returns its id.
func insertSegment(ctx context.Context, tx *sql.Tx, lo, hi int64, chunks int) (int64, error) {
	res, err := tx.ExecContext(ctx, `INSERT INTO segments (lo, hi, chunks, ndead, dead) VALUES (?, ?, ?, 0, x'')`, lo, hi, chunks)
	if err != nil {
		return 0, fmt.Errorf("segments: %w", err)
	}
	return res.LastInsertId()
}

// writeSegment stores bp's postings as a new segment, chunk ordinal i
// being chunk ids[i] (ascending).
func writeSegment(ctx context.Context, tx *sql.Tx, ins *sql.Stmt, bp *batchPostings, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	seg, err := insertSegment(ctx, tx, ids[0], ids[len(ids)-1], len(ids))
	if err != nil {
		return err
	}
	terms := make([]string, 0, len(bp.terms))
	for t := range bp.terms {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	w := blockWriter{ctx: ctx, ins: ins, seg: seg}
	var list []byte
	for _, t := range terms {
		list = list[:0]
		prev := int64(0)
		for _, p := range bp.terms[t] {
			id := ids[p.ord]
			list = appendPosting(list, prev, posting{id: id, tf: p.tf, length: bp.lengths[p.ord]})
			prev = id
		}
		if err := w.entry([]byte(t), len(bp.terms[t]), list); err != nil {
			return err
		}
	}
	return w.flush()
}

// markDead lists removed chunks as dead in the segments holding them
// (segs, updated in place).
func markDead(ctx context.Context, tx *sql.Tx, segs []segment, ids []int64) error {
	slices.Sort(ids)
	byseg := map[int][]int64{}
	for _, id := range ids {
		i := sort.Search(len(segs), func(i int) bool { return segs[i].hi >= id })
		if i == len(segs) || segs[i].lo > id {
			return fmt.Errorf("chunk %d is in no segment: %w", id, errCorrupt)
		}
		byseg[i] = append(byseg[i], id)
	}
	for i, add := range byseg {
		s := &segs[i]
		s.dead = mergeIDs(s.dead, add)
		s.ndead = len(s.dead)
		if s.ndead > s.chunks {
			return fmt.Errorf("segment %d: more dead chunks than chunks: %w", s.id, errCorrupt)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE segments SET ndead = ?, dead = ? WHERE id = ?`, s.ndead, encodeIDs(s.dead), s.id); err != nil {
			return fmt.Errorf("segments: %w", err)
		}
	}
	return nil
}

// mergeIDs merges two ascending lists, dropping repeats.
func mergeIDs(a, b []int64) []int64 {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// compact merges segments until none needs it (see the top of this
// file); segs is every segment, in order, and the result what is left.
func compact(ctx context.Context, tx *sql.Tx, ins *sql.Stmt, segs []segment) ([]segment, error) {
	for {
		from, to := plan(segs)
		if from < 0 {
			return segs, nil
		}
		merged, err := merge(ctx, tx, ins, segs[from:to])
		if err != nil {
			return nil, err
		}
		segs = slices.Replace(segs, from, to, merged...)
	}
}

// plan returns the run of segments to merge next, -1 when none.
func plan(segs []segment) (from, to int) {
	for i, s := range segs {
		if s.ndead > 0 && (s.live() == 0 || 4*s.ndead > s.chunks) {
			return i, i + 1
		}
	}
	for i := 0; i+mergeFanout <= len(segs); i++ {
		j := i + 1
		for j < len(segs) && segs[j].level() == segs[i].level() {
			j++
		}
		if j-i >= mergeFanout {
			return i, j
		}
	}
	if len(segs) > maxSegments {
		best := 0
		for i := 1; i+1 < len(segs); i++ {
			if segs[i].live()+segs[i+1].live() < segs[best].live()+segs[best+1].live() {
				best = i
			}
		}
		return best, best + 2
	}
	return -1, -1
}

// cursor walks the entries of one segment's blocks.
type cursor struct {
	blocks [][]byte
	r      blockReader
	dead   []int64
	term   []byte
	count  int
	list   []byte
	done   bool
	last   []byte // the previous block's last term
}

func (c *cursor) advance() error {
	for {
		term, count, list, ok, err := c.r.next()
		if err != nil {
			return err
		}
		if ok {
			if c.last != nil && bytes.Compare(term, c.last) <= 0 {
				return errCorrupt
			}
			c.term, c.count, c.list = term, count, list
			return nil
		}
		if c.r.seen {
			c.last = c.r.prev
		}
		if len(c.blocks) == 0 {
			c.done = true
			return nil
		}
		c.r = blockReader{b: c.blocks[0]}
		c.blocks = c.blocks[1:]
	}
}

// merge rewrites adjacent segments as one without their dead chunks'
// postings; none when they hold no live chunk.
func merge(ctx context.Context, tx *sql.Tx, ins *sql.Stmt, segs []segment) ([]segment, error) {
	cursors := make([]*cursor, len(segs))
	live := 0
	for i, s := range segs {
		live += s.live()
		blocks, err := segmentBlocks(ctx, tx, s.id)
		if err != nil {
			return nil, err
		}
		cursors[i] = &cursor{blocks: blocks, dead: s.dead}
		if err := cursors[i].advance(); err != nil {
			return nil, fmt.Errorf("segment %d: %w", s.id, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM segments WHERE id = ?`, s.id); err != nil {
			return nil, fmt.Errorf("segments: %w", err)
		}
	}
	if live == 0 {
		return nil, nil
	}
	out := segment{lo: segs[0].lo, hi: segs[len(segs)-1].hi, chunks: live}
	var err error
	if out.id, err = insertSegment(ctx, tx, out.lo, out.hi, out.chunks); err != nil {
		return nil, err
	}
	w := blockWriter{ctx: ctx, ins: ins, seg: out.id}
	var list []byte
	for {
		// The least term of the cursors: merged from each holding it, in
		// order of the segments (so of ids).
		var term []byte
		for _, c := range cursors {
			if !c.done && (term == nil || bytes.Compare(c.term, term) < 0) {
				term = c.term
			}
		}
		if term == nil {
			break
		}
		term = slices.Clone(term)
		list = list[:0]
		count := 0
		prev := int64(0)
		for i, c := range cursors {
			if c.done || !bytes.Equal(c.term, term) {
				continue
			}
			dead := c.dead
			bad := false
			err := decodeList(c.list, c.count, func(p posting) {
				for len(dead) > 0 && dead[0] < p.id {
					dead = dead[1:]
				}
				if len(dead) > 0 && dead[0] == p.id {
					return
				}
				if bad || p.id <= prev || p.id < segs[i].lo || p.id > segs[i].hi {
					bad = true
					return
				}
				list = appendPosting(list, prev, p)
				prev = p.id
				count++
			})
			if err == nil && bad {
				err = errCorrupt
			}
			if err != nil {
				return nil, fmt.Errorf("segment %d: %w", segs[i].id, err)
			}
			if err := c.advance(); err != nil {
				return nil, fmt.Errorf("segment %d: %w", segs[i].id, err)
			}
		}
		if count > 0 {
			if err := w.entry(term, count, list); err != nil {
				return nil, err
			}
		}
	}
	if err := w.flush(); err != nil {
		return nil, err
	}
	return []segment{out}, nil
}

// segmentBlocks reads a segment's blocks in order of term.
func segmentBlocks(ctx context.Context, tx *sql.Tx, seg int64) ([][]byte, error) {
	rows, err := tx.QueryContext(ctx, `SELECT data FROM postings WHERE seg = ? ORDER BY first`, seg)
	if err != nil {
		return nil, fmt.Errorf("postings: %w", err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("postings: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postings: %w", err)
	}
	return out, nil
}
