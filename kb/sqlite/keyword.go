package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/reinhq/rein/kb"
)

// exactBudget is how many matching chunks a keyword query ranks by bm25
// over all its terms at most (FTS5's bm25 costs about 2 µs a chunk): a
// broader query ranks its rarest words' chunks, then re-scores; see
// Keyword.
const exactBudget = 2500

// Keyword returns up to k chunks matching any of terms, best first by
// BM25 over all the terms (Score; higher is better), as the memory
// backend ranks them.
//
// A query matching at most exactBudget chunks (by its terms' document
// frequencies) is ranked by FTS5's bm25 over all its terms. A broader one
// (common words: "read file line by line") would take tens of
// milliseconds that way, so its candidates are the best k chunks by bm25
// over its rarest words only (kb.Alternatives: a plural and its singular,
// a compound and its parts count as one word), as many words as hold
// exactBudget chunks together (at least the rarest), and those are
// re-scored by BM25 over all the terms (see rescore). A chunk holding
// only common words is not reached: it could not score high. (Gathering
// candidates by coordination too — the chunks holding all the words, all
// but the commonest, … — cost up to 4× the time and found nothing more on
// bench/kbeval's tune half.)
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

func (s *Store) keyword(ctx context.Context, tx *sql.Tx, toks []string, k int) ([]kb.Hit, error) {
	dfs, err := s.frequencies(ctx, tx, toks)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, df := range dfs {
		total += df
	}
	if total == 0 {
		return nil, nil
	}
	if total <= s.budget() {
		return rank(ctx, tx, orExpr(toks), k, nil)
	}
	// The query's words (kb.Alternatives: a plural and its singular, a
	// compound and its parts count as one), the rarest first; a word no
	// chunk holds drops out.
	df := map[string]int{}
	for i, t := range toks {
		df[t] = dfs[i]
	}
	var groups []string // FTS5 expressions
	var gdf []int
	for _, g := range kb.Alternatives(toks) {
		n := 0
		var alts []string
		for _, t := range g {
			if df[t] > 0 {
				n += df[t]
				alts = append(alts, quote(t))
			}
		}
		if n > 0 {
			groups = append(groups, "("+strings.Join(alts, " OR ")+")")
			gdf = append(gdf, n)
		}
	}
	if len(groups) == 0 {
		return nil, nil
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return gdf[a] - gdf[b] })
	// The candidates: the best k chunks by bm25 over the rarest words, as
	// many words as the budget ranks cheaply (at least the rarest).
	rare := []string{groups[order[0]]}
	for n, i := gdf[order[0]], 1; i < len(order) && n+gdf[order[i]] <= s.budget(); i++ {
		n += gdf[order[i]]
		rare = append(rare, groups[order[i]])
	}
	seen := map[chunkRef]int64{}
	hits, err := rank(ctx, tx, strings.Join(rare, " OR "), k, seen)
	if err != nil {
		return nil, err
	}
	hits, err = s.rescore(ctx, tx, toks, dfs, hits, seen)
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, err
}

// rescore ranks the chunks coordination found by BM25 over all the query's
// tokens, as the exact pass would have (and the memory backend does):
// the query's terms are counted in each chunk again in Go
// (kb.TermFrequencies: in what it was indexed under, kb.ChunkTerms), its
// length comes from FTS5's docsize table, the corpus's size and average chunk length come from
// FTS5's own statistics. Coordination only chose them: a chunk holding
// the rare terms once no longer outranks one holding them throughout.
func (s *Store) rescore(ctx context.Context, tx *sql.Tx, toks []string, dfs []int, hits []kb.Hit, ids map[chunkRef]int64) ([]kb.Hit, error) {
	n, avg, err := averages(ctx, tx)
	if err != nil || n == 0 {
		return hits, err
	}
	lengths, err := docsizes(ctx, tx, ids)
	if err != nil {
		return nil, err
	}
	want := make(map[string]int, len(toks))
	idf := make([]float64, len(toks))
	for i, t := range toks {
		want[t] = i
		if df := float64(dfs[i]); df > 0 {
			idf[i] = math.Log(1 + (n-df+0.5)/(df+0.5))
		}
	}
	for i := range hits {
		tf := kb.TermFrequencies(hits[i].Chunk, want)
		length, ok := lengths[ids[chunkRef{hits[i].Doc, hits[i].Start}]]
		if !ok {
			length = avg
		}
		norm := 1 - bm25B + bm25B*length/avg
		score := 0.0
		for j, f := range tf {
			if f > 0 {
				score += idf[j] * float64(f) * (bm25K1 + 1) / (float64(f) + bm25K1*norm)
			}
		}
		hits[i].Score = score
	}
	slices.SortStableFunc(hits, func(a, b kb.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return hits, nil
}

// docsizes returns the length in tokens of each chunk of ids, by rowid,
// from FTS5's docsize table (a varint for the one column).
func docsizes(ctx context.Context, tx *sql.Tx, ids map[chunkRef]int64) (map[int64]float64, error) {
	out := make(map[int64]float64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	list := make([]string, 0, len(ids))
	for _, id := range ids {
		list = append(list, strconv.FormatInt(id, 10))
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, sz FROM chunk_terms_docsize WHERE id IN (`+strings.Join(list, ",")+`)`)
	if err != nil {
		return nil, fmt.Errorf("chunk lengths: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var sz []byte
		if err := rows.Scan(&id, &sz); err != nil {
			return nil, err
		}
		if v, n := varint(sz); n > 0 {
			out[id] = float64(v)
		}
	}
	return out, rows.Err()
}

// BM25 parameters, as FTS5's bm25() has them.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// averages returns how many chunks the index holds and their average
// length in tokens, from FTS5's averages record (the row of id 1 of its
// data table: varints, the row count then each column's token count).
func averages(ctx context.Context, tx *sql.Tx) (n, avg float64, err error) {
	var rec []byte
	err = tx.QueryRowContext(ctx, `SELECT block FROM chunk_terms_data WHERE id = 1`).Scan(&rec)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("index statistics: %w", err)
	}
	rows, m := varint(rec)
	tokens, m2 := varint(rec[m:])
	if m == 0 || m2 == 0 || rows == 0 {
		return 0, 0, nil
	}
	return float64(rows), max(float64(tokens)/float64(rows), 1), nil
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

// chunkRef names a chunk across the queries of one search.
type chunkRef struct {
	doc   string
	start int
}

// rank runs an FTS5 query and returns its k best chunks by bm25, best
// first; with seen, it records each chunk's rowid there.
func rank(ctx context.Context, tx *sql.Tx, match string, k int, seen map[chunkRef]int64) ([]kb.Hit, error) {
	rows, err := tx.QueryContext(ctx, `SELECT c.id, c.doc, c.start_line, c.end_line, c.heading, c.text, m.score
		FROM (SELECT rowid AS id, bm25(chunk_terms) AS score FROM chunk_terms
			WHERE chunk_terms MATCH ? ORDER BY score LIMIT ?) m
		JOIN chunks c ON c.id = m.id
		ORDER BY m.score, c.doc, c.start_line`, match, k)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []kb.Hit
	for rows.Next() {
		var h kb.Hit
		var id int64
		if err := rows.Scan(&id, &h.Doc, &h.Start, &h.End, &h.Heading, &h.Text, &h.Score); err != nil {
			return nil, err
		}
		h.Score = -h.Score
		if seen != nil {
			seen[chunkRef{h.Doc, h.Start}] = id
		}
		hits = append(hits, h)
	}
	return hits, rows.Err()
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
