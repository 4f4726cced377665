package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/reinhq/rein/kb"
)

// Keyword returns the k chunks scoring best by BM25 over all of terms
// (Score; higher is better), exactly as the memory backend ranks them
// and with its arithmetic (kb.BM25IDF, kb.BM25Score): each chunk's
// length and the live chunks' average. It reads every term's posting
// list from each segment (skipping dead chunks), so a term's document
// frequency is that of the live chunks, and scores every chunk holding a
// term; ties at the k-th place go to the lower chunk id.
func (s *Store) Keyword(ctx context.Context, terms []string, k int) ([]kb.Hit, error) {
	if len(terms) == 0 || k < 1 {
		return nil, nil
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("kb: keyword search: %w", err)
	}
	defer tx.Rollback()
	hits, err := s.keyword(ctx, tx, terms, k)
	if err != nil {
		return nil, fmt.Errorf("kb: keyword search: %w", err)
	}
	return hits, nil
}

// errStale: the database's posting lists were never built from its
// chunks (Open builds them; this is a database another rein migrated
// while this one had it open).
var errStale = errors.New("the posting lists are not built: open the knowledge base again (any rein kb command, e.g. rein kb reindex), which builds them")

// meta is the meta table's values.
type meta struct {
	gen, chunks, length, next int64
	stale                     bool
}

// readMeta reads the meta table.
func readMeta(ctx context.Context, q querier) (meta, error) {
	rows, err := q.QueryContext(ctx, `SELECT key, value FROM meta`)
	if err != nil {
		return meta{}, fmt.Errorf("meta: %w", err)
	}
	defer rows.Close()
	var m meta
	seen := 0
	for rows.Next() {
		var key string
		var v int64
		if err := rows.Scan(&key, &v); err != nil {
			return meta{}, fmt.Errorf("meta: %w", err)
		}
		switch key {
		case "generation":
			m.gen = v
		case "chunks":
			m.chunks = v
		case "length":
			m.length = v
		case "next_chunk":
			m.next = v
		case "postings_stale":
			m.stale = v != 0
		default:
			continue
		}
		seen++
	}
	if err := rows.Err(); err != nil {
		return meta{}, fmt.Errorf("meta: %w", err)
	}
	if seen != 5 || m.chunks < 0 || m.length < 0 || m.next < 1 {
		return meta{}, fmt.Errorf("meta: %d of 5 values, chunks %d, length %d, next %d: %w", seen, m.chunks, m.length, m.next, errCorrupt)
	}
	return m, nil
}

func (s *Store) keyword(ctx context.Context, tx *sql.Tx, terms []string, k int) ([]kb.Hit, error) {
	m, err := readMeta(ctx, tx)
	if err != nil {
		return nil, err
	}
	if m.stale {
		return nil, errStale
	}
	if m.chunks == 0 {
		return nil, nil
	}
	segs, err := loadSegments(ctx, tx)
	if err != nil {
		return nil, err
	}
	if len(segs) == 0 {
		return nil, nil
	}
	lookup, err := tx.PrepareContext(ctx, lookupSQL)
	if err != nil {
		return nil, err
	}
	defer lookup.Close()
	n := float64(m.chunks)
	scale := kb.BM25LengthScale(float64(m.length), n)
	acc := s.scratch(segs[0].lo, segs[len(segs)-1].hi)
	defer s.release(acc)
	var list []posting
	for i, t := range terms {
		if slices.Contains(terms[:i], t) {
			continue
		}
		if list, err = postingsOf(ctx, lookup, segs, t, list[:0]); err != nil {
			return nil, fmt.Errorf("term %q: %w", t, err)
		}
		if len(list) == 0 {
			continue
		}
		idf := kb.BM25IDF(n, float64(len(list)))
		for _, p := range list {
			acc.add(p.id, kb.BM25Score(idf, scale, p.tf, p.length))
		}
	}
	return chunksOf(ctx, tx, acc.best(k))
}

// lookupSQL finds, in each segment, the block that may hold a term (the
// last whose first term is not after it), in order of the segments.
const lookupSQL = `SELECT s.id, p.data FROM segments s JOIN postings p ON p.id = (
		SELECT id FROM postings WHERE seg = s.id AND first <= ?1 ORDER BY first DESC LIMIT 1)
	ORDER BY s.lo`

// postingsOf appends the live chunks holding term, from every segment
// (segs, in order), to list, in order of id; lookup is lookupSQL.
func postingsOf(ctx context.Context, lookup *sql.Stmt, segs []segment, term string, list []posting) ([]posting, error) {
	rows, err := lookup.QueryContext(ctx, []byte(term))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var block []byte
	i := 0
	for rows.Next() {
		var seg int64
		if err := rows.Scan(&seg, &block); err != nil {
			return nil, err
		}
		for i < len(segs) && segs[i].id != seg {
			i++
		}
		if i == len(segs) {
			return nil, fmt.Errorf("segment %d: %w", seg, errCorrupt)
		}
		if list, err = appendLive(list, segs[i], block, term); err != nil {
			return nil, fmt.Errorf("segment %d: %w", seg, err)
		}
	}
	return list, rows.Err()
}

// appendLive appends the live chunks of segment s holding term, from the
// block that may hold it, to list.
func appendLive(list []posting, s segment, block []byte, term string) ([]posting, error) {
	enc, count, err := find(block, term)
	if err != nil || enc == nil {
		return list, err
	}
	dead := s.dead
	prev := int64(0)
	bad := false
	err = decodeList(enc, count, func(p posting) {
		for len(dead) > 0 && dead[0] < p.id {
			dead = dead[1:]
		}
		if len(dead) > 0 && dead[0] == p.id {
			return
		}
		if p.id <= prev || p.id < s.lo || p.id > s.hi {
			bad = true
		}
		prev = p.id
		list = append(list, p)
	})
	if err == nil && bad {
		err = errCorrupt
	}
	return list, err
}

// chunksOf reads the chunks of ids, in the order of ids, each with its
// score.
func chunksOf(ctx context.Context, tx *sql.Tx, ids []scoredID) ([]kb.Hit, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	at := make(map[int64]int, len(ids))
	list := make([]byte, 0, 8*len(ids))
	for i, s := range ids {
		at[s.id] = i
		if i > 0 {
			list = append(list, ',')
		}
		list = strconv.AppendInt(list, s.id, 10)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, doc, start_line, end_line, heading, text FROM chunks WHERE id IN (`+string(list)+`)`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	hits := make([]kb.Hit, len(ids))
	n := 0
	for rows.Next() {
		var h kb.Hit
		var id int64
		if err := rows.Scan(&id, &h.Doc, &h.Start, &h.End, &h.Heading, &h.Text); err != nil {
			return nil, err
		}
		i, ok := at[id]
		if !ok {
			continue
		}
		h.Score = ids[i].score
		hits[i] = h
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if n != len(ids) {
		return nil, fmt.Errorf("%d of %d chunks found: the index and the chunks disagree (run rein kb reindex)", n, len(ids))
	}
	// Equal scores in path and line order, as every backend breaks ties.
	slices.SortStableFunc(hits, func(a, b kb.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		case a.Doc != b.Doc:
			return strings.Compare(a.Doc, b.Doc)
		}
		return a.Start - b.Start
	})
	return hits, nil
}
