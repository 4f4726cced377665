package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/reinhq/rein/kb"
)

// exactBudget is how many matching chunks a keyword query ranks by bm25
// over all its terms at most (FTS5's bm25 costs about 2 µs a chunk): a
// broader query is answered by coordination instead, see Keyword.
const exactBudget = 2500

// Keyword returns up to k chunks matching any of terms, best first.
//
// A query matching at most exactBudget chunks (by its terms' document
// frequencies) is ranked by FTS5's bm25 over all its terms; Score is
// the bm25 score (higher is better). A broader one (common words: "read
// file line by line") would take tens of milliseconds that way, so it is
// ranked by coordination first: the chunks holding all its terms, by
// bm25 over them, then those holding all but the most common one, and so
// on down to the rarest term alone, then those holding one of the other
// terms (while they are few, or nothing was found yet), until k are
// found; Score is then the level plus the bm25 score squashed into
// [0, 1).
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
		return rank(ctx, tx, orExpr(toks), k, nil, 0)
	}
	// Coordination: the rarest terms first; a term no chunk holds drops out.
	order := make([]int, 0, len(toks))
	for i := range toks {
		if dfs[i] > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return dfs[a] - dfs[b] })
	// Levels, each scored above the next: all the terms, all but the
	// commonest, …, the rarest alone; then each other term alone, while
	// it is rare enough to rank cheaply (or nothing was found yet).
	var levels [][]int
	for n := len(order); n >= 1; n-- {
		levels = append(levels, order[:n])
	}
	for _, i := range order[1:] {
		levels = append(levels, []int{i})
	}
	var hits []kb.Hit
	seen := map[chunkRef]bool{}
	tail := s.budget() / 2 // how many chunks the single-term levels may rank
	for li, level := range levels {
		if len(hits) >= k {
			break
		}
		if li >= len(order) {
			if df := dfs[level[0]]; len(hits) > 0 && df > tail {
				continue
			} else {
				tail -= df
			}
		}
		parts := make([]string, len(level))
		for i, j := range level {
			parts[i] = quote(toks[j])
		}
		// A level's chunks may include those of the levels before: ask
		// for enough to find k new ones.
		got, err := rank(ctx, tx, strings.Join(parts, " AND "), k+len(hits), seen, len(levels)-li)
		if err != nil {
			return nil, err
		}
		hits = append(hits, got...)
	}
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}

// chunkRef names a chunk across the queries of one search.
type chunkRef struct {
	doc   string
	start int
}

// rank runs an FTS5 query and returns its chunks best first by bm25,
// leaving out those in seen (and adding the others to it when seen is
// not nil). With level > 0 the score is level + s/(1+s) for a bm25 s.
func rank(ctx context.Context, tx *sql.Tx, match string, k int, seen map[chunkRef]bool, level int) ([]kb.Hit, error) {
	rows, err := tx.QueryContext(ctx, `SELECT c.doc, c.start_line, c.end_line, c.heading, c.text, m.score
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
		if err := rows.Scan(&h.Doc, &h.Start, &h.End, &h.Heading, &h.Text, &h.Score); err != nil {
			return nil, err
		}
		h.Score = -h.Score
		if seen != nil {
			ref := chunkRef{h.Doc, h.Start}
			if seen[ref] {
				continue
			}
			seen[ref] = true
		}
		if level > 0 {
			s := max(h.Score, 0)
			h.Score = float64(level) + s/(1+s)
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
