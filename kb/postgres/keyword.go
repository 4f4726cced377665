package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/kb"
)

// BM25's parameters, as the memory and SQLite backends use them:
// term-frequency saturation and length normalisation.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Keyword returns up to k chunks matching any of terms, best first by
// BM25. No terms, or k below 1: no hits.
//
// It skips the chunks that cannot make the top k (MaxScore): a term adds
// at most idf·(k1+1) to a chunk's score, so once the k-th best score of
// the chunks holding one of the rarest terms beats what the other, common
// terms could add together, a chunk holding only those cannot rank; the
// rarer terms alone then choose the candidates (each still scored on every
// term), and a common term's thousands of chunks are never read. The
// result is exactly the full ranking's.
func (s *Store) Keyword(ctx context.Context, terms []string, k int) ([]kb.Hit, error) {
	terms = queryTerms(terms)
	if len(terms) == 0 || k < 1 {
		return nil, nil
	}
	var hits []kb.Hit
	err := s.snapshot(ctx, func(tx pgx.Tx) error {
		_, chunks, total, err := s.generation(ctx, tx)
		if err != nil || chunks <= 0 {
			return err
		}
		q, err := s.weigh(ctx, tx, terms, chunks)
		if err != nil || len(q.terms) == 0 {
			return err
		}
		avg := max(float64(total)/float64(chunks), 1)
		args := []any{s.ns, nil, bm25K1 * (1 - bm25B), bm25K1 * bm25B / avg, k}
		for i, l := range lexemes(q.terms) {
			args = append(args, l, q.idf[i])
		}
		sql := keywordSQL(len(q.terms))
		// q's terms come rarest first: the first e choose the candidates.
		var matched int64
		for e := 1; e <= len(q.terms); e++ {
			matched += q.df[e-1]
			rest := 0.0
			for _, idf := range q.idf[e:] {
				rest += idf * (bm25K1 + 1)
			}
			if e < len(q.terms) && matched < int64(k) {
				continue // fewer than k candidates: the k-th score would be 0
			}
			args[1] = tsquery(q.terms[:e])
			if hits, err = rank(ctx, tx, sql, args); err != nil {
				return err
			}
			if e == len(q.terms) || len(hits) == k && hits[k-1].Score > rest*(1+1e-9) {
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("kb: keyword search: %w", err)
	}
	return hits, nil
}

// rank runs keywordSQL.
func rank(ctx context.Context, tx pgx.Tx, sql string, args []any) ([]kb.Hit, error) {
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (kb.Hit, error) {
		var h kb.Hit
		err := r.Scan(&h.Doc, &h.Start, &h.End, &h.Heading, &h.Text, &h.Score)
		return h, err
	})
}

// weighed are the terms of a query that some chunk holds, rarest (highest
// idf) first, with their document frequencies and idf.
type weighed struct {
	terms []string
	df    []int64
	idf   []float64
}

// weigh reads the document frequencies of terms among the namespace's
// chunks (of which there are n) and keeps the terms some chunk holds,
// rarest first, with BM25's idf.
func (s *Store) weigh(ctx context.Context, tx pgx.Tx, terms []string, n int64) (weighed, error) {
	rows, err := tx.Query(ctx, `SELECT term, chunks FROM kb_terms WHERE namespace = $1 AND term = ANY($2::text[])`, s.ns, terms)
	if err != nil {
		return weighed{}, err
	}
	df := map[string]int64{}
	var term string
	var count int64
	if _, err := pgx.ForEachRow(rows, []any{&term, &count}, func() error {
		df[term] = count
		return nil
	}); err != nil {
		return weighed{}, err
	}
	var w weighed
	for _, t := range terms {
		if df[t] > 0 {
			w.terms = append(w.terms, t)
		}
	}
	slices.SortStableFunc(w.terms, func(a, b string) int { return cmp.Compare(df[a], df[b]) })
	for _, t := range w.terms {
		d := float64(df[t])
		w.df = append(w.df, df[t])
		w.idf = append(w.idf, kb.BM25IDF(float64(n), d))
	}
	return w, nil
}

// keywordSQL returns the query ranking by BM25 the chunks that match any
// of n terms: $1 the namespace, $2 the tsquery matching any term, $3 and
// $4 the length normalisation's terms (k1·(1-b), k1·b/avgdl), $5 the
// limit, then each term's one-lexeme tsquery and idf. Only the number of
// terms shapes the text; every value is a parameter.
//
// A term's frequency in a chunk is not a function of PostgreSQL, but
// ts_rank of a one-lexeme query is one of it alone: with the lexeme's
// positions all of the default weight 0.1, it is 0.1·Σ_{j≤tf} 1/j² / (π²/6).
// Since Σ_{j≤n} 1/j² ≈ π²/6 - 1/(n+½), tf = round(1/(π²/6 - S) - ½), S
// the sum, gives the frequency back exactly, for every count a tsvector
// keeps (1 to 256; TestTermFrequency checks it), and 0 for an absent term.
// The ranking is thus one pass of C functions over the candidates.
//
// Each candidate's tsvector is read out of TOAST once, not once per term:
// concatenating an empty tsvector makes an in-memory copy, and OFFSET 0
// keeps the subquery from being flattened. Bodies are read for the k
// chunks returned only.
func keywordSQL(n int) string {
	var tf, score strings.Builder
	for i := range n {
		fmt.Fprintf(&tf, ", round(1 / (%s - ts_rank(c.tsv, $%d::text::tsquery, 0)::float8 * %s) - 0.5) AS tf%d",
			piSquaredOver6, 6+2*i, rankScale, i)
		if i > 0 {
			score.WriteString(" + ")
		}
		// tf/(tf+norm) written with tf once, which is then computed once.
		fmt.Fprintf(&score, "$%d::float8 * (1 - f.norm / (f.tf%d + f.norm))", 7+2*i, i)
	}
	return `WITH ranked AS (
	SELECT c.path, c.ord, (` + score.String() + `) * ` + strconv.FormatFloat(bm25K1+1, 'g', -1, 64) + `::float8 AS score
	FROM (SELECT path, ord, terms, tsv || ''::tsvector AS tsv FROM kb_chunks
		WHERE namespace = $1 AND tsv @@ $2::text::tsquery OFFSET 0) c,
	LATERAL (SELECT $3::float8 + $4::float8 * c.terms AS norm` + tf.String() + `) f
	ORDER BY score DESC, c.path, c.ord
	LIMIT $5)
SELECT r.path, k.start_line, k.end_line, k.heading, k.body, r.score
FROM ranked r JOIN kb_chunks k ON k.namespace = $1 AND k.path = r.path AND k.ord = r.ord
ORDER BY r.score DESC, r.path, r.ord`
}

// The constants of keywordSQL, as float8 literals: π²/6 and the factor
// turning ts_rank into Σ 1/j² (1.64493406685 / 0.1, as ts_rank computes
// it).
const (
	piSquaredOver6 = "1.6449340668482264::float8"
	rankScale      = "16.4493406685::float8"
)
