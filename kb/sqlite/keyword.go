package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/reinhq/rein/kb"
)

// exactBudget is how many matching chunks a keyword query ranks in its
// first pass at most (FTS5's bm25 costs about 2 µs a chunk); see Keyword.
const exactBudget = 2500

// Keyword returns the k chunks scoring best by BM25 over all of terms
// (Score; higher is better), exactly as the memory and PostgreSQL
// backends rank them: kb.BM25IDF's idf (FTS5's own), k1 1.2, b 0.75,
// FTS5's chunk lengths and average.
//
// A query matching at most exactBudget chunks (by its terms' document
// frequencies) is ranked by FTS5's bm25 over all its terms at once. A
// broader one (common words: "read file line by line") would take tens of
// milliseconds that way, so it skips the chunks that cannot make the top
// k (MaxScore, as kb/postgres does): a term adds at most idf·(k1+1) to a
// chunk's score, so once the k-th best score among the chunks holding one
// of the rarest terms beats what all the other terms could add together,
// a chunk holding only those cannot rank. The rarest terms (as many as
// hold exactBudget chunks together) choose the candidates, and FTS5
// scores each on every term: one query for the candidates holding a
// common term too ("rare AND common", whose bm25 counts every term) and
// one for the others (see rareOnly). While the bound is not met, the next
// rarest terms join the rare ones, a round at a time: each round ranks
// only the chunks its terms bring ("new NOT rare", then as above) and
// keeps the best k so far, and takes as many terms as the k-th score so
// far needs to beat the bound (a round that cannot end the search would
// cost bm25's count of every term's chunks for nothing).
func (s *Store) Keyword(ctx context.Context, terms []string, k int) ([]kb.Hit, error) {
	toks := tokens(terms)
	if len(toks) == 0 || k < 1 {
		return nil, nil
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("kb: keyword search: %w", err)
	}
	defer tx.Rollback()
	hits, err := s.keyword(ctx, tx, toks, k)
	if err != nil {
		return nil, fmt.Errorf("kb: keyword search: %w", err)
	}
	return hits, nil
}

// ranked returns the k best chunks of an FTS5 query by bm25.
func (s *Store) ranked(ctx context.Context, tx *sql.Tx, match string, k int) ([]kb.Hit, error) {
	ids, err := rankIDs(ctx, tx, match, k)
	if err != nil {
		return nil, err
	}
	return chunksOf(ctx, tx, ids)
}

func (s *Store) keyword(ctx context.Context, tx *sql.Tx, toks []string, k int) ([]kb.Hit, error) {
	dfs, err := s.frequencies(ctx, tx, toks)
	if err != nil {
		return nil, err
	}
	// The terms some chunk holds, rarest first.
	type term struct {
		tok string
		df  int
	}
	var ts []term
	total := 0
	for i, t := range toks {
		if dfs[i] > 0 {
			ts = append(ts, term{t, dfs[i]})
			total += dfs[i]
		}
	}
	if len(ts) == 0 {
		return nil, nil
	}
	slices.SortStableFunc(ts, func(a, b term) int { return a.df - b.df })
	all := make([]string, len(ts))
	for i, t := range ts {
		all[i] = t.tok
	}
	if total <= s.budget() {
		return s.ranked(ctx, tx, orExpr(all), k)
	}
	n, err := chunkCount(ctx, tx)
	if err != nil {
		return nil, err
	}
	// bound[e]: the most the terms from the e-th on add to a score.
	bound := make([]float64, len(ts)+1)
	for i := len(ts) - 1; i >= 0; i-- {
		bound[i] = bound[i+1] + kb.BM25IDF(n, float64(ts[i].df))*(bm25K1+1)
	}
	e, matched := 1, ts[0].df
	for e < len(ts) && (matched+ts[e].df <= s.budget() || matched < k) {
		// (fewer than k candidates: the k-th score would be 0)
		matched += ts[e].df
		e++
	}
	// Each round ranks the chunks holding one of all[from:e] and none of
	// all[:from] (the earlier rounds ranked those) and keeps the best k
	// chunks so far.
	var best []scoredID
	for from := 0; ; {
		fresh := orExpr(all[from:e])
		if from > 0 {
			fresh = "(" + fresh + ") NOT (" + orExpr(all[:from]) + ")"
		}
		if e == len(ts) {
			// No common term left: the fresh chunks' bm25 is their score.
			ids, err := rankIDs(ctx, tx, fresh, k)
			if err != nil {
				return nil, err
			}
			return chunksOf(ctx, tx, keepBest(best, ids, k))
		}
		both, err := rankIDs(ctx, tx, "("+fresh+") AND ("+orExpr(all[e:])+")", k)
		if err != nil {
			return nil, err
		}
		best = keepBest(best, both, k)
		// A fresh chunk holding no common term scores at most what the
		// fresh terms add: ranking those is needed only if that could
		// beat the k-th score so far.
		if len(best) < k || best[k-1].score <= (bound[from]-bound[e])*(1+1e-9) {
			alone, err := rareOnly(ctx, tx, fresh, both, k)
			if err != nil {
				return nil, err
			}
			best = keepBest(best, alone, k)
		}
		if len(best) == k && best[k-1].score > bound[e]*(1+1e-9) {
			return chunksOf(ctx, tx, best)
		}
		// The next round takes the next term, and those after it until
		// the k-th score so far (which only grows) could beat the bound:
		// a round that could not end the search costs a count of every
		// term's chunks (bm25's) for nothing.
		from = e
		for e < len(ts) {
			matched += ts[e].df
			e++
			if matched >= k && (len(best) < k || best[k-1].score > bound[e]*(1+1e-9)) {
				break
			}
		}
	}
}

// keepBest returns the best k of best and ids by score, best first;
// equal scores keep their order, best's first.
func keepBest(best, ids []scoredID, k int) []scoredID {
	best = append(best, ids...)
	slices.SortStableFunc(best, func(a, b scoredID) int { return cmp.Compare(b.score, a.score) })
	return best[:min(k, len(best))]
}

// rareOnly returns the best (up to k) of the chunks matching rare, an
// FTS5 query, that hold no common term, by bm25 (best first, ties by
// rowid), given both, the best k chunks holding a rare and a common term
// with their full scores.
//
// It ranks the chunks matching rare on the rare terms alone, which is
// the whole score of a chunk holding no common term, rather than asking
// FTS5 for "rare NOT common", whose bm25 would count the chunks holding
// each common term anew (it counts every phrase of its query per query)
// and match them.
// A chunk of this list that is not in both but outscores the k-th of
// both holds no common term: if it held one, its full score, at least
// this one, would have put it in both. Of the chunks scoring more than
// that k-th, at most k are in both, so the best 2k hold the best k
// others. (When both has fewer than k, it holds every chunk with a common
// term, so any other chunk holds none.)
func rareOnly(ctx context.Context, tx *sql.Tx, rare string, both []scoredID, k int) ([]scoredID, error) {
	ids, err := rankIDs(ctx, tx, rare, 2*k)
	if err != nil {
		return nil, err
	}
	in := make(map[int64]bool, len(both))
	for _, b := range both {
		in[b.id] = true
	}
	out := ids[:0]
	for _, c := range ids {
		if len(both) == k && c.score <= both[k-1].score {
			break
		}
		if !in[c.id] && len(out) < k {
			out = append(out, c)
		}
	}
	return out, nil
}

// BM25 parameters, as FTS5's bm25() has them.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// chunkCount returns how many chunks the index holds, from FTS5's averages
// record (the row of id 1 of its data table: varints, the row count then
// each column's token count), as its bm25 counts them.
func chunkCount(ctx context.Context, tx *sql.Tx) (float64, error) {
	var rec []byte
	err := tx.QueryRowContext(ctx, `SELECT block FROM chunk_terms_data WHERE id = 1`).Scan(&rec)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("index statistics: %w", err)
	}
	n, m := varint(rec)
	if m == 0 {
		return 0, nil
	}
	return float64(n), nil
}

// varint decodes an SQLite varint (big-endian groups of 7 bits, the high
// bit set on all but the last; a ninth byte gives 8 bits) and returns it
// with its length; 0, 0 when b is too short.
func varint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 9 && i < len(b); i++ {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}

// rankIDs runs an FTS5 query and returns its k best chunks by bm25, best
// first (ties by rowid), without reading them.
func rankIDs(ctx context.Context, tx *sql.Tx, match string, k int) ([]scoredID, error) {
	rows, err := tx.QueryContext(ctx, `SELECT rowid, bm25(chunk_terms) AS score FROM chunk_terms
		WHERE chunk_terms MATCH ? ORDER BY score, rowid LIMIT ?`, match, k)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []scoredID
	for rows.Next() {
		var s scoredID
		if err := rows.Scan(&s.id, &s.score); err != nil {
			return nil, err
		}
		s.score = -s.score
		out = append(out, s)
	}
	return out, rows.Err()
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

// frequencies returns how many chunks hold each token, from a cache kept
// for the database's generation.
func (s *Store) frequencies(ctx context.Context, tx *sql.Tx, toks []string) ([]int, error) {
	var gen int64
	if err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'generation'`).Scan(&gen); err != nil {
		return nil, fmt.Errorf("generation: %w", err)
	}
	dfs := make([]int, len(toks))
	var missing []int
	s.dfMu.Lock()
	if s.dfGen != gen || len(s.dfCache) > maxCachedFrequencies {
		s.dfGen, s.dfCache = gen, map[string]int{}
	}
	for i, t := range toks {
		if df, ok := s.dfCache[t]; ok {
			dfs[i] = df
		} else {
			missing = append(missing, i)
		}
	}
	s.dfMu.Unlock()
	for _, i := range missing {
		// fts5vocab counts a term's chunks from its posting list alone.
		err := tx.QueryRowContext(ctx, `SELECT coalesce((SELECT doc FROM chunk_vocab WHERE term = ?), 0)`, toks[i]).Scan(&dfs[i])
		if err != nil {
			return nil, fmt.Errorf("term frequency: %w", err)
		}
	}
	s.dfMu.Lock()
	if s.dfGen == gen {
		for _, i := range missing {
			s.dfCache[toks[i]] = dfs[i]
		}
	}
	s.dfMu.Unlock()
	return dfs, nil
}

// maxCachedFrequencies bounds the cache of term frequencies.
const maxCachedFrequencies = 100_000

// dfState is the cache of term frequencies (embedded in Store).
type dfState struct {
	dfMu    sync.Mutex
	dfGen   int64
	dfCache map[string]int
	// exact overrides exactBudget (tests); 0 means exactBudget.
	exact int
}

func (s *Store) budget() int {
	if s.exact > 0 {
		return s.exact
	}
	return exactBudget
}

// tokens turns terms into the tokens the index holds: a term holding
// characters the FTS5 ascii tokenizer splits on (ASCII other than letters
// and digits; kb.Terms makes none) becomes several. Lowercased as the
// tokenizer does, repeats and invalid UTF-8 dropped.
func tokens(terms []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range terms {
		for _, w := range strings.FieldsFunc(t, separates) {
			w = asciiLower(w)
			if seen[w] || !utf8.ValidString(w) {
				continue
			}
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// separates reports a character the FTS5 ascii tokenizer (see the
// migration) splits on: ASCII but neither a letter nor a digit.
func separates(r rune) bool {
	return r < utf8.RuneSelf && !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// quote makes a token an FTS5 string: never query syntax.
func quote(tok string) string { return `"` + strings.ReplaceAll(tok, `"`, `""`) + `"` }

// orExpr is the FTS5 query matching any of the tokens.
func orExpr(toks []string) string {
	parts := make([]string, len(toks))
	for i, t := range toks {
		parts[i] = quote(t)
	}
	return strings.Join(parts, " OR ")
}
