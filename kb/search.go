package kb

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// SearchOptions tunes a search; the zero value is the defaults.
type SearchOptions struct {
	// TopK is how many hits to return at most: 0 means 8; more than 50
	// is cut to 50.
	TopK int
	// Threshold drops the hits whose fused score is below Threshold
	// times the best hit's (0 keeps all; 0.5 keeps those at least half
	// as good as the best).
	Threshold float64
	// Candidates is how many hits each pass contributes to the fusion:
	// 0 means 50; at most 1,000. The keyword pass asks the backend for at
	// least Ranking.Candidates chunks to rank into documents.
	Candidates int
	// KeywordOnly runs the keyword pass alone, even with an Embedder
	// (Results.Note says it was asked for).
	KeywordOnly bool
}

// Results is the outcome of a search.
type Results struct {
	// Mode is "hybrid" when both passes ran, "keyword" when only the
	// keyword pass did.
	Mode string `json:"mode"`
	// Note says why a search was keyword only, "" when hybrid.
	Note string   `json:"note,omitempty"`
	Hits []Result `json:"hits"`
}

// NoteKeywordOnly is Results.Note of a base without an embedding model.
const NoteKeywordOnly = "keyword search only: no embedding model is configured (set kb.embedding_model)"

// NoteKeywordAsked is Results.Note of a search asked to be keyword only.
const NoteKeywordAsked = "keyword search only, as asked"

// ErrEmptyQuery is returned for a query without a searchable term.
var ErrEmptyQuery = errors.New("kb: search: the query has no searchable term")

// Search finds the chunks best matching query: a keyword pass over the
// query's Terms and, with an Embedder, a vector pass over its embedding,
// fused by reciprocal rank fusion (see Fuse), thresholded and cut to
// TopK. Without an Embedder, or when embedding the query fails, the
// search is keyword only and Results.Note says why; it never fails for
// the embedder. A query of only stopwords, punctuation or single letters
// fails with ErrEmptyQuery.
func (b *Base) Search(ctx context.Context, query string, opts SearchOptions) (*Results, error) {
	opts = opts.withDefaults()
	q := analyseQuery(query)
	if len(q.terms) == 0 {
		return nil, fmt.Errorf("%w: %q has only stopwords, punctuation or single letters; use distinctive words such as identifiers, names or error messages",
			ErrEmptyQuery, clip(query, 80))
	}
	res := &Results{Mode: ModeKeyword, Note: NoteKeywordOnly}
	var vecHits []Hit
	if opts.KeywordOnly {
		res.Note = NoteKeywordAsked
	}
	if b.embedder != nil && !opts.KeywordOnly {
		hits, err := b.vectorPass(ctx, query, opts.Candidates)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("kb: search: %w", ctx.Err())
			}
			res.Note = "keyword search only: embedding the query failed: " + clip(err.Error(), 300)
		} else {
			res.Mode, res.Note, vecHits = ModeHybrid, "", hits
		}
	}
	rk := b.cfg.Ranking.withDefaults()
	vecHits = byDocument(vecHits, rk.PerDoc)
	kwHits, err := b.backend.Keyword(ctx, q.terms, max(rk.Candidates, opts.Candidates))
	if err != nil {
		return nil, fmt.Errorf("kb: search: keyword pass: %w", err)
	}
	kwHits = rankDocuments(kwHits, q, rk)
	fused := Fuse(kwHits, vecHits, b.weights, b.cfg.RRFK)
	if opts.Threshold > 0 && len(fused) > 0 {
		floor := opts.Threshold * fused[0].Score
		n := 0
		for n < len(fused) && fused[n].Score >= floor {
			n++
		}
		fused = fused[:n]
	}
	if len(fused) > opts.TopK {
		fused = fused[:opts.TopK]
	}
	for i := range fused {
		annotate(&fused[i], q)
	}
	res.Hits = fused
	return res, nil
}

func (o SearchOptions) withDefaults() SearchOptions {
	if o.TopK <= 0 {
		o.TopK = DefaultTopK
	}
	o.TopK = min(o.TopK, MaxTopK)
	if o.Candidates <= 0 {
		o.Candidates = DefaultCandidates
	}
	o.Candidates = min(max(o.Candidates, o.TopK), MaxCandidates)
	return o
}

// vectorPass embeds the query and asks the backend for its neighbours.
func (b *Base) vectorPass(ctx context.Context, query string, k int) ([]Hit, error) {
	vecs, err := b.embedder.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.cfg.EmbeddingModel, err)
	}
	if len(vecs) != 1 || len(vecs[0]) == 0 {
		return nil, fmt.Errorf("%s: %d vectors for 1 query: the embedder is broken", b.cfg.EmbeddingModel, len(vecs))
	}
	hits, err := b.backend.Vector(ctx, vecs[0], k)
	if err != nil {
		return nil, fmt.Errorf("vector pass: %w", err)
	}
	return hits, nil
}

// embed fills in the vectors of entries, EmbedBatch chunks a call.
func (b *Base) embed(ctx context.Context, entries []Entry) error {
	var texts []string
	for _, e := range entries {
		for _, c := range e.Chunks {
			texts = append(texts, embedText(c))
		}
	}
	vecs := make([][]float32, 0, len(texts))
	for lo := 0; lo < len(texts); lo += b.cfg.EmbedBatch {
		part := texts[lo:min(lo+b.cfg.EmbedBatch, len(texts))]
		got, err := b.embedder.Embed(ctx, part)
		if err != nil {
			return fmt.Errorf("embed %d chunks of %s … with %s: %w (documents already indexed are kept; run again to finish)",
				len(part), entries[0].Doc.Path, b.cfg.EmbeddingModel, err)
		}
		if len(got) != len(part) {
			return fmt.Errorf("embed %d chunks with %s: the embedder returned %d vectors: want one per text",
				len(part), b.cfg.EmbeddingModel, len(got))
		}
		vecs = append(vecs, got...)
	}
	for i := range entries {
		n := len(entries[i].Chunks)
		if n > 0 {
			entries[i].Vectors, vecs = vecs[:n:n], vecs[n:]
		}
	}
	return nil
}

// embedText is what a chunk is embedded as: its document, heading and
// text.
func embedText(c Chunk) string {
	var sb strings.Builder
	sb.Grow(len(c.Doc) + len(c.Heading) + len(c.Text) + 2)
	sb.WriteString(c.Doc)
	sb.WriteByte('\n')
	if c.Heading != "" {
		sb.WriteString(c.Heading)
		sb.WriteByte('\n')
	}
	sb.WriteString(c.Text)
	return sb.String()
}

// dedupe drops repeated terms, keeping the first of each.
func dedupe(terms []string) []string {
	seen := make(map[string]bool, len(terms))
	out := terms[:0]
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// clip cuts s to n bytes for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
