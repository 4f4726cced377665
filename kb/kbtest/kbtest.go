// Package kbtest is the conformance suite of kb.Backend: every backend
// (kb.NewMemory, kb/sqlite, kb/postgres) runs Run from its tests and so
// answers the same way. The suite is backend-agnostic: it only calls the
// Backend interface (and kb.Batcher when the backend has it).
package kbtest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/kb"
)

// Run runs the conformance suite. open returns a new, empty backend for
// each subtest (closing it is open's business, with t.Cleanup); subtests
// run in parallel when they do not share a backend, so open must give
// each call its own storage.
func Run(t *testing.T, open func(t *testing.T) kb.Backend) {
	tests := []struct {
		name string
		fn   func(*testing.T, kb.Backend)
	}{
		{"PutReplaceDelete", testPutReplaceDelete},
		{"PutRefused", testPutRefused},
		{"EmptyDocument", testEmptyDocument},
		{"DocumentsOrder", testDocumentsOrder},
		{"NotFound", testNotFound},
		{"KeywordRanking", testKeywordRanking},
		{"KeywordScoresAsMemory", testKeywordScoresAsMemory},
		{"KeywordHeading", testKeywordHeading},
		{"KeywordLimits", testKeywordLimits},
		{"KeywordUnicode", testKeywordUnicode},
		{"KeywordHostileTerms", testKeywordHostileTerms},
		{"VectorOrder", testVectorOrder},
		{"VectorDimensions", testVectorDimensions},
		{"VectorReplace", testVectorReplace},
		{"Batch", testBatch},
		{"ConcurrentReaders", testConcurrentReaders},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

// indexed is a fixed time (whole seconds, UTC) that every backend stores
// exactly.
var indexed = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// doc builds a document of texts, one chunk each (lines 10i+1 … 10i+5).
func doc(path string, texts ...string) (kb.Document, []kb.Chunk) {
	d := kb.Document{Path: path, Hash: "hash-" + path, Size: int64(len(strings.Join(texts, ""))),
		Embedding: "", Indexed: indexed}
	chunks := make([]kb.Chunk, len(texts))
	for i, text := range texts {
		chunks[i] = kb.Chunk{Doc: path, Start: 10*i + 1, End: 10*i + 5, Text: text}
	}
	d.Chunks = len(chunks)
	return d, chunks
}

func put(t *testing.T, b kb.Backend, path string, texts ...string) {
	t.Helper()
	ctx := t.Context()
	d, cs := doc(path, texts...)
	if err := b.Put(ctx, d, cs, nil); err != nil {
		t.Fatalf("Put(%s): %v", path, err)
	}
}

func putVec(t *testing.T, b kb.Backend, path string, vecs [][]float32, texts ...string) {
	t.Helper()
	ctx := t.Context()
	d, cs := doc(path, texts...)
	d.Embedding = "test-model"
	if err := b.Put(ctx, d, cs, vecs); err != nil {
		t.Fatalf("Put(%s) with vectors: %v", path, err)
	}
}

func documents(t *testing.T, b kb.Backend) []kb.Document {
	t.Helper()
	ctx := t.Context()
	docs, err := b.Documents(ctx)
	if err != nil {
		t.Fatalf("Documents: %v", err)
	}
	for i := range docs { // compare instants, not locations
		docs[i].Indexed = docs[i].Indexed.UTC()
	}
	return docs
}

func keyword(t *testing.T, b kb.Backend, query string, k int) []kb.Hit {
	t.Helper()
	ctx := t.Context()
	hits, err := b.Keyword(ctx, kb.Terms(query), k)
	if err != nil {
		t.Fatalf("Keyword(%q): %v", query, err)
	}
	return hits
}

// where lists hits as "doc:start".
func where(hits []kb.Hit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s:%d", h.Doc, h.Start))
	}
	return out
}

func testPutReplaceDelete(t *testing.T, b kb.Backend) {
	ctx := t.Context()
	put(t, b, "a.md", "alpha apple one", "alpha banana two", "alpha cherry three")
	put(t, b, "b.md", "alpha date")
	want := []kb.Document{
		{Path: "a.md", Hash: "hash-a.md", Size: int64(len("alpha apple onealpha banana twoalpha cherry three")), Chunks: 3, Indexed: indexed},
		{Path: "b.md", Hash: "hash-b.md", Size: int64(len("alpha date")), Chunks: 1, Indexed: indexed},
	}
	if diff := cmp.Diff(want, documents(t, b)); diff != "" {
		t.Errorf("Documents after two puts (-want +got):\n%s", diff)
	}
	hits := keyword(t, b, "banana", 10)
	wantHit := kb.Chunk{Doc: "a.md", Start: 11, End: 15, Text: "alpha banana two"}
	if len(hits) != 1 || !cmp.Equal(hits[0].Chunk, wantHit) || !(hits[0].Score > 0) {
		t.Errorf("Keyword(banana) = %+v, want one hit %+v with a positive score", hits, wantHit)
	}

	// Replace a.md with fewer chunks: the old ones are gone.
	d, cs := doc("a.md", "alpha elder")
	d.Hash = "hash-2"
	if err := b.Put(ctx, d, cs, nil); err != nil {
		t.Fatalf("Put replacing a.md: %v", err)
	}
	if got := where(keyword(t, b, "banana cherry apple", 10)); len(got) != 0 {
		t.Errorf("the replaced chunks still match: %v", got)
	}
	if diff := cmp.Diff([]string{"a.md:1"}, where(keyword(t, b, "elder", 10))); diff != "" {
		t.Errorf("Keyword(elder) after the replace (-want +got):\n%s", diff)
	}
	docs := documents(t, b)
	if len(docs) != 2 || docs[0].Hash != "hash-2" || docs[0].Chunks != 1 {
		t.Errorf("Documents after the replace: %+v, want a.md with hash-2 and 1 chunk", docs)
	}

	if err := b.Delete(ctx, "a.md"); err != nil {
		t.Fatalf("Delete(a.md): %v", err)
	}
	if diff := cmp.Diff([]string{"b.md:1"}, where(keyword(t, b, "alpha elder", 10))); diff != "" {
		t.Errorf("Keyword after deleting a.md (-want +got):\n%s", diff)
	}
	if docs := documents(t, b); len(docs) != 1 || docs[0].Path != "b.md" {
		t.Errorf("Documents after deleting a.md: %+v", docs)
	}
}

// A refused Put leaves the document as it was.
func testPutRefused(t *testing.T, b kb.Backend) {
	ctx := t.Context()
	putVec(t, b, "a.md", [][]float32{{1, 0}}, "kept words")
	for name, vecs := range map[string][][]float32{
		"too few vectors":  {{1, 0}},
		"too many vectors": {{1, 0}, {0, 1}, {1, 1}},
		"mixed dimensions": {{1, 0}, {1, 0, 0}},
		"an empty vector":  {{1, 0}, {}},
	} {
		d, cs := doc("a.md", "replacing words", "more words")
		if err := b.Put(ctx, d, cs, vecs); err == nil {
			t.Errorf("Put with %s succeeded, want an error", name)
		}
	}
	if got := where(keyword(t, b, "kept", 10)); !cmp.Equal(got, []string{"a.md:1"}) {
		t.Errorf("the old chunk after refused puts: %v", got)
	}
	if got := where(keyword(t, b, "replacing", 10)); len(got) != 0 {
		t.Errorf("a refused put wrote chunks: %v", got)
	}
	if docs := documents(t, b); len(docs) != 1 || docs[0].Hash != "hash-a.md" {
		t.Errorf("the document after refused puts: %+v", docs)
	}
}

func testEmptyDocument(t *testing.T, b kb.Backend) {
	ctx := t.Context()
	put(t, b, "empty.txt")
	want := []kb.Document{{Path: "empty.txt", Hash: "hash-empty.txt", Indexed: indexed}}
	if diff := cmp.Diff(want, documents(t, b)); diff != "" {
		t.Errorf("a document without chunks (-want +got):\n%s", diff)
	}
	if err := b.Delete(ctx, "empty.txt"); err != nil {
		t.Errorf("Delete of a document without chunks: %v", err)
	}
}

func testDocumentsOrder(t *testing.T, b kb.Backend) {
	paths := []string{"b.md", "a/b.md", "a-b.md", "a.md", "B.md", "a/a.md", "ä.md", "_x.md", "a b.md"}
	for _, p := range paths {
		put(t, b, p, "text of "+p)
	}
	var got []string
	for _, d := range documents(t, b) {
		got = append(got, d.Path)
	}
	want := []string{"B.md", "_x.md", "a b.md", "a-b.md", "a.md", "a/a.md", "a/b.md", "b.md", "ä.md"} // byte order
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Documents order, want byte order (-want +got):\n%s", diff)
	}
}

func testNotFound(t *testing.T, b kb.Backend) {
	ctx := t.Context()
	if err := b.Delete(ctx, "missing.md"); !errors.Is(err, kb.ErrNotFound) {
		t.Errorf("Delete(missing) = %v, want kb.ErrNotFound", err)
	}
	put(t, b, "a.md", "words")
	if err := b.Delete(ctx, "a.md"); err != nil {
		t.Fatalf("Delete(a.md): %v", err)
	}
	if err := b.Delete(ctx, "a.md"); !errors.Is(err, kb.ErrNotFound) {
		t.Errorf("Delete twice = %v, want kb.ErrNotFound", err)
	}
}

// keywordCorpus is a small fixed corpus whose ranking any BM25 agrees on.
var keywordCorpus = map[string][]string{
	"tls.go": {
		"func (c *Conn) Handshake() error { return c.clientHandshake(certificate) }",
		"handshake handshake handshake tls client certificate verify handshake",
	},
	"url.go": {
		"func ParseQuery(query string) (Values, error) { parse the url query string into values }",
		"url escaping and unescaping of path segments",
	},
	"sort.go": {
		"func SliceStable(x any, less func(i, j int) bool) sorts a slice stable insertion sort",
		"the quick brown fox jumps over the lazy dog and other filler words that dilute the handshake term across a long passage of text about nothing much at all really",
	},
}

func putCorpus(t *testing.T, b kb.Backend) {
	for _, p := range []string{"sort.go", "tls.go", "url.go"} {
		put(t, b, p, keywordCorpus[p]...)
	}
}

func testKeywordRanking(t *testing.T, b kb.Backend) {
	putCorpus(t, b)
	for _, tc := range []struct {
		query string
		first string   // the best hit
		all   []string // every hit, any order; nil: not checked
	}{
		// Frequency: the chunk saying handshake five times beats the one
		// saying it once (in a long chunk) and the one with "clientHandshake".
		{query: "handshake", first: "tls.go:11", all: []string{"sort.go:11", "tls.go:1", "tls.go:11"}},
		{query: "parse url query string", first: "url.go:1"},
		// Every chunk of sort.go is indexed under its path's terms too
		// (SPEC KB-4: the path is a field): its second chunk holds "sort".
		{query: "sort slice stable", first: "sort.go:1", all: []string{"sort.go:1", "sort.go:11"}},
		// A rare term outweighs a common one.
		{query: "escaping handshake", first: "url.go:11"},
		// Identifiers split: ParseQuery is found by "parse query", SliceStable by "slicestable".
		{query: "ParseQuery", first: "url.go:1", all: []string{"url.go:1"}},
		{query: "slicestable", first: "sort.go:1", all: []string{"sort.go:1"}},
		{query: "xylophone zebra", all: []string{}},
	} {
		hits := keyword(t, b, tc.query, 10)
		got := where(hits)
		if tc.first != "" && (len(got) == 0 || got[0] != tc.first) {
			t.Errorf("Keyword(%q) = %v, want %s first", tc.query, got, tc.first)
		}
		if tc.all != nil {
			if diff := cmp.Diff(tc.all, sorted(got)); diff != "" {
				t.Errorf("Keyword(%q) hits (-want +got):\n%s", tc.query, diff)
			}
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Score > hits[i-1].Score {
				t.Errorf("Keyword(%q): hit %d scores %v above hit %d's %v: want best first", tc.query, i, hits[i].Score, i-1, hits[i-1].Score)
			}
		}
	}
}

// Every backend ranks chunks alike (SPEC KB-4): the same hits, in the
// same order, with the memory backend's BM25 scores, for narrow and broad
// queries (a broad one is where a backend may skip chunks that cannot
// make the top k; it must not skip one that can).
func testKeywordScoresAsMemory(t *testing.T, b kb.Backend) {
	ref := kb.NewMemory()
	words := []string{"alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "lambda"}
	rnd := rand.New(rand.NewPCG(27, 4))
	for d := range 16 {
		texts := make([]string, 6)
		for i := range texts {
			var sb strings.Builder
			for range 2 + rnd.IntN(20) {
				// Zipf-like: alpha is nearly everywhere, lambda rare.
				sb.WriteString(words[min(len(words)-1, int(rnd.ExpFloat64()*1.5))])
				sb.WriteByte(' ')
			}
			texts[i] = sb.String()
		}
		path := fmt.Sprintf("doc%02d.md", d)
		put(t, b, path, texts...)
		put(t, ref, path, texts...)
	}
	for _, q := range []string{"lambda", "alpha", "kappa alpha", "sigma omega beta alpha",
		"lambda kappa sigma omega delta gamma beta alpha", "beta missing"} {
		for _, k := range []int{1, 5, 20, 200} {
			want, got := keyword(t, ref, q, k), keyword(t, b, q, k)
			if len(got) != len(want) {
				t.Errorf("Keyword(%q, %d): %d hits, the memory backend gives %d", q, k, len(got), len(want))
				continue
			}
			for i := range got {
				close := math.Abs(got[i].Score-want[i].Score) <= 1e-6*math.Abs(want[i].Score)
				same := got[i].Doc == want[i].Doc && got[i].Start == want[i].Start
				// Equal scores may come in another order.
				if !close || !same && math.Abs(got[i].Score-want[i].Score) > 1e-9 && !tied(want, i) {
					t.Errorf("Keyword(%q, %d): hit %d is %s:%d scoring %v, the memory backend's is %s:%d scoring %v",
						q, k, i, got[i].Doc, got[i].Start, got[i].Score, want[i].Doc, want[i].Start, want[i].Score)
					break
				}
			}
		}
	}
}

// tied reports whether hit i of hits scores (nearly) as a neighbour does.
func tied(hits []kb.Hit, i int) bool {
	near := func(j int) bool {
		return j >= 0 && j < len(hits) && math.Abs(hits[j].Score-hits[i].Score) <= 1e-9*math.Abs(hits[i].Score)
	}
	return near(i-1) || near(i+1)
}

// A chunk matches on its heading too (kb.ChunkTerms).
func testKeywordHeading(t *testing.T, b kb.Backend) {
	ctx := t.Context()
	d, cs := doc("guide.md", "run the installer and follow the prompts")
	cs[0].Heading = "Installation on Debian"
	if err := b.Put(ctx, d, cs, nil); err != nil {
		t.Fatal(err)
	}
	hits := keyword(t, b, "debian", 10)
	if len(hits) != 1 || hits[0].Heading != "Installation on Debian" {
		t.Errorf("Keyword(debian) = %+v, want the chunk under the heading, with its heading", hits)
	}
}

func testKeywordLimits(t *testing.T, b kb.Backend) {
	ctx := t.Context()
	for i := range 6 {
		put(t, b, fmt.Sprintf("d%d.md", i), strings.Repeat("common ", i+1)+"filler words here")
	}
	if got := keyword(t, b, "common", 3); len(got) != 3 {
		t.Errorf("Keyword(k=3) gave %d hits", len(got))
	}
	if got := keyword(t, b, "common", 100); len(got) != 6 {
		t.Errorf("Keyword(k=100) gave %d hits, want all 6", len(got))
	}
	if got := keyword(t, b, "common", 0); len(got) != 0 {
		t.Errorf("Keyword(k=0) gave %d hits, want none", len(got))
	}
	for _, terms := range [][]string{nil, {}} {
		if hits, err := b.Keyword(ctx, terms, 10); err != nil || len(hits) != 0 {
			t.Errorf("Keyword(%#v) = %v, %v; want no hits and no error", terms, hits, err)
		}
	}
	if hits, err := b.Vector(ctx, nil, 10); err != nil || len(hits) != 0 {
		t.Errorf("Vector(nil) = %v, %v; want no hits and no error", hits, err)
	}
}

func testKeywordUnicode(t *testing.T, b kb.Backend) {
	put(t, b, "ja.md", "日本語のテキストを検索する", "東京タワー")
	put(t, b, "zh.md", "中文分词测试", "机器学习")
	put(t, b, "de.md", "Größenänderung der Übersicht", "Straße")
	put(t, b, "ko.md", "한국어 검색 테스트")
	for _, tc := range []struct{ query, want string }{
		{"日本語", "ja.md:1"},
		{"検索", "ja.md:1"},
		{"タワー", "ja.md:11"},
		{"分词", "zh.md:1"},
		{"机器学习", "zh.md:11"},
		{"übersicht", "de.md:1"},
		{"ÜBERSICHT", "de.md:1"},
		{"straße", "de.md:11"},
		{"검색", "ko.md:1"},
	} {
		if got := where(keyword(t, b, tc.query, 10)); len(got) == 0 || got[0] != tc.want {
			t.Errorf("Keyword(%q) = %v, want %s first", tc.query, got, tc.want)
		}
	}
}

// Terms the backend must treat as data, never as syntax of its query
// language.
func testKeywordHostileTerms(t *testing.T, b kb.Backend) {
	ctx := t.Context()
	put(t, b, "a.md", "quote \" and apostrophe ' and OR AND NOT NEAR and star * and colon: column:value")
	for _, terms := range [][]string{
		{`"`}, {`'`}, {`a"b`}, {"or"}, {"and"}, {"not"}, {"near"}, {"*"}, {"col:"}, {"^x"}, {"(x"}, {`\`},
		{"NEAR(a b)"}, {"- x"}, {"x' OR '1'='1"}, {"&|!"},
		// Invalid UTF-8 (a query variant cut inside a character once made
		// it): matches nothing, fails nothing.
		{"a\xea\x82", "quote"}, {"\xff"},
	} {
		if _, err := b.Keyword(ctx, terms, 10); err != nil {
			t.Errorf("Keyword(%q): %v", terms, err)
		}
	}
	if got := where(keyword(t, b, "column value apostrophe", 10)); !cmp.Equal(got, []string{"a.md:1"}) {
		t.Errorf("Keyword after hostile terms: %v", got)
	}
}

func testVectorOrder(t *testing.T, b kb.Backend) {
	ctx := t.Context()
	putVec(t, b, "v.md", [][]float32{{1, 0, 0}, {0.9, 0.1, 0}, {0, 1, 0}, {-1, 0, 0}, {2, 2, 0}},
		"east", "east by north", "north", "west", "north east")
	put(t, b, "novec.md", "east without a vector")
	hits, err := b.Vector(ctx, []float32{1, 0, 0}, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"v.md:1", "v.md:11", "v.md:41", "v.md:21", "v.md:31"}
	if diff := cmp.Diff(want, where(hits)); diff != "" {
		t.Errorf("Vector order (-want +got):\n%s", diff)
	}
	wantScores := []float64{1, 0.9 / math.Hypot(0.9, 0.1), 1 / math.Sqrt2, 0, -1}
	for i, h := range hits {
		if i < len(wantScores) && math.Abs(h.Score-wantScores[i]) > 1e-4 {
			t.Errorf("hit %s scores %v, want the cosine %v", where(hits[i:i+1]), h.Score, wantScores[i])
		}
	}
	if len(hits) > 0 && hits[0].Text != "east" {
		t.Errorf("the best hit's text is %q, want east", hits[0].Text)
	}
	if got, err := b.Vector(ctx, []float32{0, 10, 0}, 2); err != nil || !cmp.Equal(where(got), []string{"v.md:21", "v.md:41"}) {
		t.Errorf("Vector(north, k=2) = %v, %v", where(got), err)
	}
	if got, err := b.Vector(ctx, []float32{1, 0, 0}, 0); err != nil || len(got) != 0 {
		t.Errorf("Vector(k=0) = %v, %v; want nothing", where(got), err)
	}
}

func testVectorDimensions(t *testing.T, b kb.Backend) {
	ctx := t.Context()
	putVec(t, b, "three.md", [][]float32{{1, 0, 0}}, "three dimensions")
	putVec(t, b, "two.md", [][]float32{{1, 0}}, "two dimensions")
	for _, tc := range []struct {
		q    []float32
		want []string
	}{
		{[]float32{1, 0, 0}, []string{"three.md:1"}},
		{[]float32{1, 0}, []string{"two.md:1"}},
		{[]float32{1, 0, 0, 0}, []string{}},
	} {
		got, err := b.Vector(ctx, tc.q, 10)
		if err != nil {
			t.Errorf("Vector(%v): %v", tc.q, err)
			continue
		}
		if diff := cmp.Diff(tc.want, where(got)); diff != "" {
			t.Errorf("Vector(%v) compares only vectors of its dimension (-want +got):\n%s", tc.q, diff)
		}
	}
}

func testVectorReplace(t *testing.T, b kb.Backend) {
	ctx := t.Context()
	putVec(t, b, "a.md", [][]float32{{1, 0}, {0, 1}}, "first", "second")
	if got, _ := b.Vector(ctx, []float32{1, 0}, 1); !cmp.Equal(where(got), []string{"a.md:1"}) {
		t.Fatalf("Vector before the replace: %v", where(got))
	}
	putVec(t, b, "a.md", [][]float32{{0, 1}}, "replaced")
	got, err := b.Vector(ctx, []float32{1, 0}, 10)
	if err != nil || !cmp.Equal(where(got), []string{"a.md:1"}) || got[0].Text != "replaced" {
		t.Errorf("Vector after the replace = %+v, %v; want only the new chunk", got, err)
	}
	put(t, b, "a.md", "no vectors now")
	if got, err := b.Vector(ctx, []float32{1, 0}, 10); err != nil || len(got) != 0 {
		t.Errorf("Vector after a put without vectors = %v, %v; want nothing", where(got), err)
	}
	putVec(t, b, "b.md", [][]float32{{1, 1}}, "bee")
	if err := b.Delete(ctx, "b.md"); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Vector(ctx, []float32{1, 0}, 10); err != nil || len(got) != 0 {
		t.Errorf("Vector after a delete = %v, %v; want nothing", where(got), err)
	}
}

func testBatch(t *testing.T, b kb.Backend) {
	ctx := t.Context()
	batcher, ok := b.(kb.Batcher)
	if !ok {
		t.Skip("the backend is not a kb.Batcher")
	}
	put(t, b, "old.md", "old words")
	var entries []kb.Entry
	for i := range 5 {
		d, cs := doc(fmt.Sprintf("b%d.md", i), fmt.Sprintf("batch words %d", i))
		entries = append(entries, kb.Entry{Doc: d, Chunks: cs})
	}
	d, cs := doc("old.md", "new words")
	entries = append(entries, kb.Entry{Doc: d, Chunks: cs})
	if err := batcher.PutBatch(ctx, entries); err != nil {
		t.Fatalf("PutBatch: %v", err)
	}
	if got := len(keyword(t, b, "batch", 10)); got != 5 {
		t.Errorf("Keyword(batch) after PutBatch: %d hits, want 5", got)
	}
	if got := where(keyword(t, b, "old new", 10)); !cmp.Equal(got, []string{"old.md:1"}) {
		t.Errorf("the replaced document after PutBatch: %v", got)
	}
	// A bad entry refuses the whole batch.
	d2, cs2 := doc("c.md", "refused batch")
	bad := []kb.Entry{{Doc: d2, Chunks: cs2}, {Doc: d, Chunks: cs, Vectors: [][]float32{{1}, {2}}}}
	if err := batcher.PutBatch(ctx, bad); err == nil {
		t.Errorf("PutBatch with a bad entry succeeded")
	}
	if got := where(keyword(t, b, "refused", 10)); len(got) != 0 {
		t.Errorf("a refused batch wrote chunks: %v", got)
	}
	if docs := documents(t, b); len(docs) != 6 {
		t.Errorf("Documents after the refused batch: %d, want 6", len(docs))
	}
}

// Readers running during Puts see a document's old chunks or its new
// ones, never a mix.
func testConcurrentReaders(t *testing.T, b kb.Backend) {
	ctx := t.Context()
	const chunks = 8
	version := func(v int) (kb.Document, []kb.Chunk, [][]float32) {
		texts := make([]string, chunks)
		vecs := make([][]float32, chunks)
		for i := range texts {
			texts[i] = fmt.Sprintf("shared marker version%d chunk%d", v%2, i)
			vecs[i] = []float32{1, float32(i), float32(v % 2)}
		}
		d, cs := doc("doc.md", texts...)
		d.Hash = fmt.Sprintf("v%d", v%2)
		return d, cs, vecs
	}
	d, cs, vs := version(0)
	if err := b.Put(ctx, d, cs, vs); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var problems []string
	report := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		if len(problems) < 5 {
			problems = append(problems, s)
		}
	}
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				hits, err := b.Keyword(ctx, []string{"marker"}, 100)
				if err != nil {
					report("Keyword: " + err.Error())
					return
				}
				if len(hits) != chunks {
					report(fmt.Sprintf("Keyword saw %d chunks, want %d", len(hits), chunks))
				}
				versions := map[bool]int{}
				for _, h := range hits {
					versions[strings.Contains(h.Text, "version1")]++
				}
				if len(versions) > 1 {
					report(fmt.Sprintf("Keyword saw a mix of versions: %v", versions))
				}
				vh, err := b.Vector(ctx, []float32{1, 0, 0}, 100)
				if err != nil {
					report("Vector: " + err.Error())
					return
				}
				if len(vh) != chunks {
					report(fmt.Sprintf("Vector saw %d chunks, want %d", len(vh), chunks))
				}
			}
		})
	}
	for v := 1; v <= 30; v++ {
		d, cs, vs := version(v)
		if err := b.Put(ctx, d, cs, vs); err != nil {
			t.Errorf("Put version %d: %v", v, err)
			break
		}
	}
	close(stop)
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
