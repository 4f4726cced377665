package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/reinhq/rein/kb"
)

// fileBM25 is the baseline the issue measures rein against: plain Okapi
// BM25 over whole files (k1 1.2, b 0.75), one field, no chunks, under
// rein's own terms (kb.Terms), over the files the knowledge base indexed.
type fileBM25 struct {
	paths    []string
	lengths  []float64
	postings map[string]map[int]int
	avg      float64
}

// newFileBM25 reads the documents of base from root.
func newFileBM25(ctx context.Context, root string, base *kb.Base) (*fileBM25, error) {
	docs, err := base.Documents(ctx)
	if err != nil {
		return nil, err
	}
	x := &fileBM25{postings: map[string]map[int]int{}}
	total := 0.0
	for _, d := range docs {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(d.Path)))
		if err != nil {
			return nil, err
		}
		id := len(x.paths)
		terms := kb.Terms(string(data))
		x.paths = append(x.paths, d.Path)
		x.lengths = append(x.lengths, float64(len(terms)))
		total += float64(len(terms))
		for _, t := range terms {
			p := x.postings[t]
			if p == nil {
				p = map[int]int{}
				x.postings[t] = p
			}
			p[id]++
		}
	}
	x.avg = max(total/float64(max(len(x.paths), 1)), 1)
	return x, nil
}

// search returns the paths of the k best files for query.
func (x *fileBM25) search(query string, k int) []string {
	n := float64(len(x.paths))
	scores := map[int]float64{}
	seen := map[string]bool{}
	for _, t := range kb.Terms(query) {
		if seen[t] {
			continue
		}
		seen[t] = true
		p := x.postings[t]
		df := float64(len(p))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for id, tf := range p {
			f := float64(tf)
			scores[id] += idf * f * 2.2 / (f + 1.2*(0.25+0.75*x.lengths[id]/x.avg))
		}
	}
	ids := make([]int, 0, len(scores))
	for id := range scores {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if scores[ids[i]] != scores[ids[j]] {
			return scores[ids[i]] > scores[ids[j]]
		}
		return x.paths[ids[i]] < x.paths[ids[j]]
	})
	out := make([]string, 0, k)
	for _, id := range ids[:min(k, len(ids))] {
		out = append(out, x.paths[id])
	}
	return out
}
