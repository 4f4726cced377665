package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/kb"
	"github.com/reinhq/rein/session/postgres/pgtest"
)

var ctx = context.Background()

// openStore opens a store on url, closed when the test ends.
func openStore(t testing.TB, url string, opts Options) *Store {
	t.Helper()
	s, err := Open(ctx, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rawConn is a plain connection to url, closed when the test ends.
func rawConn(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// fixture is what Put takes.
type fixture struct {
	doc    kb.Document
	chunks []kb.Chunk
	vecs   [][]float32
}

// doc is a document of a chunk for each of texts, one line each, with
// vecs as its vectors.
func doc(path string, texts []string, vecs [][]float32) fixture {
	d := kb.Document{Path: path, Hash: "h-" + path, Size: 10, Chunks: len(texts), Indexed: time.Unix(1700000000, 0).UTC()}
	if vecs != nil {
		d.Embedding = "test/3"
	}
	var cs []kb.Chunk
	for i, text := range texts {
		cs = append(cs, kb.Chunk{Doc: path, Start: i + 1, End: i + 1, Text: text})
	}
	return fixture{d, cs, vecs}
}

// put stores a document or fails the test.
func put(t *testing.T, s *Store, f fixture) {
	t.Helper()
	if err := s.Put(ctx, f.doc, f.chunks, f.vecs); err != nil {
		t.Fatal(err)
	}
}

// docsOf returns the documents of hits, in order.
func docsOf(hits []kb.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s:%d", h.Doc, h.Start))
	}
	return out
}

// keyword runs a keyword query or fails the test.
func keyword(t *testing.T, s *Store, query string) []string {
	t.Helper()
	hits, err := s.Keyword(ctx, kb.Terms(query), 10)
	if err != nil {
		t.Fatal(err)
	}
	return docsOf(hits)
}

// vector runs a vector query or fails the test.
func vector(t *testing.T, s *Store, v []float32) []string {
	t.Helper()
	hits, err := s.Vector(ctx, v, 10)
	if err != nil {
		t.Fatal(err)
	}
	return docsOf(hits)
}

// A second store on the namespace, in this process or another, sees the
// first's writes at its next query: its caches follow the generation.
func TestTwoStores(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	a := openStore(t, u, Options{Namespace: "w"})
	b := openStore(t, u, Options{Namespace: "w"})
	put(t, a, doc("x.md", []string{"alpha parser", "beta"}, [][]float32{{1, 0, 0}, {0, 1, 0}}))
	if diff := cmp.Diff([]string{"x.md:1"}, keyword(t, b, "parser")); diff != "" {
		t.Errorf("b's keyword query after a's put (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"x.md:1", "x.md:2"}, vector(t, b, []float32{1, 0.1, 0})); diff != "" {
		t.Errorf("b's vector query after a's put (-want +got):\n%s", diff)
	}
	// a rewrites x.md with other vectors and adds y.md: b's cached vectors
	// and document frequencies are stale and must be reloaded.
	put(t, a, doc("x.md", []string{"alpha parser", "beta"}, [][]float32{{0, 0, 1}, {0, 1, 0}}))
	put(t, a, doc("y.md", []string{"parser parser gamma"}, [][]float32{{1, 0, 0}}))
	if diff := cmp.Diff([]string{"y.md:1", "x.md:2", "x.md:1"}, vector(t, b, []float32{1, 0.1, 0})); diff != "" {
		t.Errorf("b's vector query after a's rewrite (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"y.md:1", "x.md:1"}, keyword(t, b, "parser")); diff != "" {
		t.Errorf("b's keyword query after a's rewrite (-want +got):\n%s", diff)
	}
	if err := b.Delete(ctx, "y.md"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"x.md:2", "x.md:1"}, vector(t, a, []float32{1, 0.1, 0})); diff != "" {
		t.Errorf("a's vector query after b's delete (-want +got):\n%s", diff)
	}
	if got := keyword(t, a, "gamma"); len(got) != 0 {
		t.Errorf("a's keyword query for a deleted chunk: %v", got)
	}
}

// Namespaces sharing a database see nothing of each other's.
func TestNamespaces(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	one := openStore(t, u, Options{Namespace: "one"})
	two := openStore(t, u, Options{Namespace: "two"})
	put(t, one, doc("same.md", []string{"shared words here"}, [][]float32{{1, 0, 0}}))
	put(t, two, doc("same.md", []string{"shared words yonder"}, [][]float32{{1, 0, 0}}))
	put(t, two, doc("only-two.md", []string{"shared"}, nil))
	docs, err := one.Documents(ctx)
	if err != nil || len(docs) != 1 || docs[0].Path != "same.md" {
		t.Errorf("one's documents: %+v, %v", docs, err)
	}
	hits, err := one.Keyword(ctx, kb.Terms("shared yonder"), 10)
	if err != nil || len(hits) != 1 || hits[0].Text != "shared words here" {
		t.Errorf("one's keyword hits: %+v, %v", hits, err)
	}
	vhits, err := one.Vector(ctx, []float32{1, 0, 0}, 10)
	if err != nil || len(vhits) != 1 || vhits[0].Text != "shared words here" {
		t.Errorf("one's vector hits: %+v, %v", vhits, err)
	}
	if err := one.Delete(ctx, "only-two.md"); !errors.Is(err, kb.ErrNotFound) {
		t.Errorf("one deleting two's document: %v, want kb.ErrNotFound", err)
	}
	if err := one.Delete(ctx, "same.md"); err != nil {
		t.Fatal(err)
	}
	if docs, err := two.Documents(ctx); err != nil || len(docs) != 2 {
		t.Errorf("two's documents after one deleted its same.md: %+v, %v", docs, err)
	}
	if got := keyword(t, two, "yonder"); len(got) != 1 {
		t.Errorf("two's keyword hits after one's delete: %v", got)
	}
}

// A database written by a newer rein is refused, saying which versions.
func TestNewerSchema(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	openStore(t, u, Options{}).Close()
	if _, err := rawConn(t, u).Exec(ctx,
		`INSERT INTO rein_kb_migrations (version, name, applied_at) VALUES (99, '0099_future', now())`); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctx, u, Options{})
	want := "knowledge-base schema version 99 is newer than this rein (1); upgrade rein"
	if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), want) {
		t.Errorf("Open of a newer database: %v; want ErrNewerSchema saying %q", err, want)
	}
}

// Processes opening an empty database at once apply each migration once.
func TestMigrationRace(t *testing.T) {
	t.Parallel()
	u, schema := pgtest.Schema(t)
	const racers = 6
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range racers {
		wg.Go(func() {
			<-start
			s, err := Open(ctx, u, Options{})
			if err != nil {
				t.Errorf("Open racing %d others: %v", racers-1, err)
				return
			}
			s.Close()
		})
	}
	close(start)
	wg.Wait()
	c := rawConn(t, u)
	rows, err := c.Query(ctx, `SELECT version FROM rein_kb_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1}, versions); diff != "" {
		t.Errorf("applied migrations (-want +got):\n%s", diff)
	}
	rows, err = c.Query(ctx, `SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, schema)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"kb_chunks", "kb_documents", "kb_namespaces", "kb_terms", "rein_kb_migrations"}
	if diff := cmp.Diff(want, tables); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}
}

// hostile are strings that would change a query were they pasted into
// SQL or into a tsquery's text.
var hostile = []string{
	`'); DROP TABLE kb_chunks; --`,
	`x' | 'y`,
	`a & !b`,
	`pre:*`,
	`back\slash`,
	`\`,
	`''`,
	`$1`,
	`"quoted"`,
	`<-> (x)`,
	"tab\tand\nnewline",
	" ",
}

// Terms and paths that look like SQL or tsquery syntax are matched as
// plain text and change nothing else.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	s := openStore(t, u, Options{Namespace: `ns'; DROP TABLE kb_documents; --`})
	put(t, s, doc("plain.md", []string{"ordinary words x y a b"}, nil))
	for i, h := range hostile {
		path := fmt.Sprintf("%d-%s.md", i, h)
		put(t, s, doc(path, []string{h}, nil))
		hits, err := s.Keyword(ctx, []string{h}, 10)
		if err != nil {
			t.Errorf("Keyword(%q): %v", h, err)
			continue
		}
		// Only the chunk holding exactly that term, if the analyser kept it.
		for _, hit := range hits {
			if hit.Doc != path {
				t.Errorf("Keyword(%q) found %s", h, hit.Doc)
			}
		}
		if err := s.Delete(ctx, path); err != nil {
			t.Errorf("Delete(%q): %v", path, err)
		}
	}
	// The raw terms, not the analyser's: each is one lexeme.
	for _, h := range hostile {
		if _, err := s.Keyword(ctx, []string{h, "words"}, 10); err != nil {
			t.Errorf("Keyword(%q, words): %v", h, err)
		}
	}
	docs, err := s.Documents(ctx)
	if err != nil || len(docs) != 1 {
		t.Errorf("documents after the hostile ones were deleted: %+v, %v", docs, err)
	}
}

// Every term round-trips through the literals: stored in a tsvector and
// asked for in a tsquery, it is the one lexeme there and it matches.
func TestLexemeLiterals(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	c := rawConn(t, u)
	for _, term := range append(hostile, "plain", "中文", "net/http", "a:1", "x y") {
		checkLexeme(t, c, term)
	}
}

// checkLexeme checks that term survives a tsvector and a tsquery literal.
func checkLexeme(t *testing.T, c *pgx.Conn, term string) {
	t.Helper()
	vec, n, _ := tsvector([]string{term, "other", term})
	var lexemes []string
	var match bool
	err := c.QueryRow(ctx, `SELECT tsvector_to_array($1::text::tsvector), $1::text::tsvector @@ $2::text::tsquery`,
		vec, tsquery([]string{term})).Scan(&lexemes, &match)
	if err != nil {
		t.Errorf("term %q: tsvector %s: %v", term, vec, err)
		return
	}
	want := []string{term, "other"}
	if term > "other" {
		want = []string{"other", term}
	}
	if diff := cmp.Diff(want, lexemes); diff != "" || !match || n != 3 {
		t.Errorf("term %q: tsvector %s: lexemes (-want +got):\n%s; matches %v, length %d", term, vec, diff, match, n)
	}
}

func FuzzLexeme(f *testing.F) {
	for _, h := range hostile {
		f.Add(h)
	}
	f.Add("plain")
	f.Add("中文")
	u, _ := pgtest.Schema(f)
	c := rawConn(f, u)
	f.Fuzz(func(t *testing.T, term string) {
		if !usable(term) || term == "other" {
			t.Skip()
		}
		checkLexeme(t, c, term)
	})
}

// Put checks its input before writing: a bad chunk leaves the old ones.
func TestPutInvalid(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	s := openStore(t, u, Options{})
	put(t, s, doc("a.md", []string{"kept text"}, nil))
	for name, tc := range map[string]struct {
		texts []string
		vecs  [][]float32
	}{
		"NUL":             {[]string{"fine", "bad\x00text"}, nil},
		"not UTF-8":       {[]string{"bad \xff"}, nil},
		"vectors short":   {[]string{"one", "two"}, [][]float32{{1}}},
		"dimensions":      {[]string{"one", "two"}, [][]float32{{1, 2}, {1}}},
		"an empty vector": {[]string{"one"}, [][]float32{{}}},
	} {
		f := doc("a.md", tc.texts, tc.vecs)
		if err := s.Put(ctx, f.doc, f.chunks, f.vecs); err == nil {
			t.Errorf("%s: Put succeeded", name)
		}
	}
	if got := keyword(t, s, "kept"); len(got) != 1 {
		t.Errorf("the old chunk after refused puts: %v", got)
	}
}

// keywordSQL's reading of a term's frequency out of ts_rank is exact for
// every count a tsvector keeps, and 0 for an absent term.
func TestTermFrequency(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	c := rawConn(t, u)
	for _, n := range []int{0, 1, 2, 3, 4, 7, 10, 31, 100, 199, 255, 256, 300} {
		terms := []string{"filler"}
		for range n {
			terms = append(terms, "term", "filler")
		}
		vec, _, _ := tsvector(terms)
		var tf float64
		err := c.QueryRow(ctx, `SELECT round(1 / (`+piSquaredOver6+` - ts_rank($1::text::tsvector, $2::text::tsquery, 0)::float8 * `+
			rankScale+`) - 0.5)`, vec, tsquery([]string{"term"})).Scan(&tf)
		if want := min(n, maxPositions); err != nil || int(tf) != want {
			t.Errorf("%d occurrences: term frequency %v, %v; want %d", n, tf, err, want)
		}
	}
}

// The counts every write keeps (chunks and terms per namespace, chunks
// per term) equal what the chunks say, through puts that add, replace
// and drop terms, batches, deletes and a drop, in two namespaces.
func TestTotals(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	a := openStore(t, u, Options{Namespace: "a"})
	b := openStore(t, u, Options{Namespace: "b"})
	c := rawConn(t, u)
	check := func(when string) {
		t.Helper()
		for _, ns := range []string{"a", "b"} {
			var bad int
			err := c.QueryRow(ctx, `WITH truth AS (
					SELECT l AS term, count(*) AS n FROM kb_chunks, unnest(tsvector_to_array(tsv)) l
					WHERE namespace = $1 GROUP BY l)
				SELECT count(*) FROM truth FULL JOIN (SELECT term, chunks FROM kb_terms WHERE namespace = $1) kept USING (term)
				WHERE truth.n IS DISTINCT FROM kept.chunks`, ns).Scan(&bad)
			if err != nil || bad != 0 {
				t.Errorf("%s: namespace %s: %d term counts differ from the chunks' (%v)", when, ns, bad, err)
			}
			var chunks, terms, wantChunks, wantTerms int64
			err = c.QueryRow(ctx, `SELECT COALESCE((SELECT chunks FROM kb_namespaces WHERE namespace = $1), 0),
				COALESCE((SELECT terms FROM kb_namespaces WHERE namespace = $1), 0),
				(SELECT count(*) FROM kb_chunks WHERE namespace = $1),
				(SELECT COALESCE(sum(terms), 0) FROM kb_chunks WHERE namespace = $1)`, ns).Scan(&chunks, &terms, &wantChunks, &wantTerms)
			if err != nil || chunks != wantChunks || terms != wantTerms {
				t.Errorf("%s: namespace %s: totals %d chunks, %d terms; the chunks say %d, %d (%v)",
					when, ns, chunks, terms, wantChunks, wantTerms, err)
			}
		}
	}
	put(t, a, doc("x.md", []string{"alpha beta beta", "beta gamma"}, nil))
	put(t, b, doc("x.md", []string{"alpha beta"}, nil))
	check("first puts")
	put(t, a, doc("x.md", []string{"beta delta", "epsilon", "alpha alpha"}, nil))
	check("a replace")
	if err := a.PutBatch(ctx, []kb.Entry{
		{Doc: kb.Document{Path: "y.md"}, Chunks: []kb.Chunk{{Text: "gamma zeta"}}},
		{Doc: kb.Document{Path: "x.md"}, Chunks: []kb.Chunk{{Text: "eta"}}},
		{Doc: kb.Document{Path: "z.md"}},
	}); err != nil {
		t.Fatal(err)
	}
	check("a batch")
	if err := a.Delete(ctx, "y.md"); err != nil {
		t.Fatal(err)
	}
	check("a delete")
	if err := b.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	check("a drop")
	if got := keyword(t, a, "eta"); len(got) != 1 {
		t.Errorf("a's keyword hits after b's drop: %v", got)
	}
}

// Keyword ranks as the memory backend does (the same BM25 over the same
// terms), MaxScore's pruning included: on a corpus of Zipf-distributed
// words, for random queries and limits, the hits and their scores agree.
func TestKeywordMatchesMemory(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	s := openStore(t, u, Options{})
	m := kb.NewMemory()
	r := rand.New(rand.NewPCG(5, 6))
	z := rand.NewZipf(r, 1.2, 1, 999)
	var entries []kb.Entry
	for d := range 40 {
		e := kb.Entry{Doc: kb.Document{Path: fmt.Sprintf("d%02d.md", d)}}
		for i := range 10 {
			words := make([]string, 10+r.IntN(60))
			for j := range words {
				words[j] = word(z.Uint64())
			}
			e.Chunks = append(e.Chunks, kb.Chunk{Start: 10*i + 1, End: 10*i + 10, Text: strings.Join(words, " ")})
		}
		entries = append(entries, e)
	}
	if err := s.PutBatch(ctx, entries); err != nil {
		t.Fatal(err)
	}
	if err := m.PutBatch(ctx, entries); err != nil {
		t.Fatal(err)
	}
	for range 150 {
		var terms []string
		for range 1 + r.IntN(6) {
			terms = append(terms, word(z.Uint64()))
		}
		k := []int{1, 3, 10, 50}[r.IntN(4)]
		got, err := s.Keyword(ctx, terms, k)
		if err != nil {
			t.Fatal(err)
		}
		want, err := m.Keyword(ctx, terms, k)
		if err != nil {
			t.Fatal(err)
		}
		if !sameRanking(got, want) {
			t.Errorf("Keyword(%v, %d):\n got %v\nwant %v", terms, k, scoredHits(got), scoredHits(want))
		}
	}
}

// sameRanking reports whether two rankings have the same scores, rank by
// rank, and the same chunks but for the order of near-equal scores.
func sameRanking(a, b []kb.Hit) bool {
	if len(a) != len(b) {
		return false
	}
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(y)) }
	for i := range a {
		if !near(a[i].Score, b[i].Score) {
			return false
		}
		found := false
		for j := range b {
			found = found || b[j].Doc == a[i].Doc && b[j].Start == a[i].Start && near(a[i].Score, b[j].Score)
		}
		if !found {
			return false
		}
	}
	return true
}

func scoredHits(hits []kb.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s:%d=%.6f", h.Doc, h.Start, h.Score))
	}
	return out
}
