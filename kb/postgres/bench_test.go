package postgres

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/kb"
	"github.com/reinhq/rein/session/postgres/pgtest"
)

// benchCorpus is n chunks of 60 words drawn from a vocabulary of 5,000
// with a Zipf distribution, as words of real text are: a few very common,
// most rare.
func benchCorpus(n int) [][]string {
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.1, 1, 4999)
	docs := make([][]string, n)
	for i := range docs {
		words := make([]string, 60)
		for j := range words {
			words[j] = word(z.Uint64())
		}
		docs[i] = words
	}
	return docs
}

// BenchmarkKeyword measures keyword queries of three to five terms over
// 4,000 chunks (200 documents of 20): ns/op, and the p50 and p99 of the
// queries' latencies. The first query of each term set counts its
// document frequencies; later ones find them cached.
func BenchmarkKeyword(b *testing.B) {
	u, _ := pgtest.Schema(b)
	s := openStore(b, u, Options{Namespace: "bench"})
	corpus := benchCorpus(4000)
	for d := range 200 {
		var cs []kb.Chunk
		for i := range 20 {
			cs = append(cs, kb.Chunk{Doc: fmt.Sprint(d), Start: i*10 + 1, End: i*10 + 10, Text: strings.Join(corpus[d*20+i], " ")})
		}
		if err := s.Put(ctx, kb.Document{Path: fmt.Sprint(d), Hash: "h", Chunks: 20}, cs, nil); err != nil {
			b.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	z := rand.NewZipf(r, 1.1, 1, 4999)
	queries := make([][]string, 64)
	for i := range queries {
		for range 3 + i%3 {
			queries[i] = append(queries[i], word(z.Uint64()))
		}
	}
	var lat []time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, err := s.Keyword(ctx, queries[i%len(queries)], 10); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// word is the n-th word of the benchmark's vocabulary: letters only, so
// the analyser keeps it whole.
func word(n uint64) string {
	w := []byte{'q'}
	for {
		w = append(w, byte('a'+n%26))
		n /= 26
		if n == 0 {
			return string(w)
		}
	}
}
