package kb

import "sort"

// Weights weigh the passes in reciprocal rank fusion; the zero value is
// the defaults: 1.0 each, as reciprocal rank fusion was defined. With its
// k of 60 a heavier pass crowds out the other's best: weighing vectors 1.5
// put the vector pass's first 30 hits above the keyword pass's first, so
// a vector pass that tells nothing apart (bench/kbeval's hash vectors)
// took recall@10 on goroot from 0.92 to 0.42.
type Weights struct {
	Keyword float64 `json:"keyword,omitempty"`
	Vector  float64 `json:"vector,omitempty"`
}

func (w Weights) withDefaults() Weights {
	if w.Keyword <= 0 {
		w.Keyword = 1.0
	}
	if w.Vector <= 0 {
		w.Vector = 1.0
	}
	return w
}

// Result is one hit of a search: a chunk with its fused score and its rank
// in each pass.
type Result struct {
	Chunk
	// Score is the fused score Σ w_i / (k + rank_i) over the passes that
	// found the chunk.
	Score float64 `json:"score"`
	// KeywordRank and VectorRank are the chunk's 1-based ranks in the
	// keyword and vector passes; 0 when that pass did not find it.
	KeywordRank int `json:"keyword_rank,omitempty"`
	VectorRank  int `json:"vector_rank,omitempty"`
	// Matched are the query's terms (as Terms makes them, with their
	// variants) that the chunk's heading and text hold.
	Matched []string `json:"matched,omitempty"`
	// Snippet is what a reader needs of the chunk: the lines holding
	// matched terms, each with the line after it (the first lines when
	// none matches, as for a hit of the vector pass alone).
	Snippet []Line `json:"snippet,omitempty"`
}

// chunkKey identifies a chunk across passes: its document and first line.
type chunkKey struct {
	doc   string
	start int
}

// byDocument orders chunk hits (best first) document by document: the
// documents by their best chunk, each with at most perDoc of its chunks,
// as the keyword pass ranks them, so that one document's many similar
// chunks do not fill a pass's list.
func byDocument(hits []Hit, perDoc int) []Hit {
	at := map[string]int{} // document → its index in docs
	var docs [][]Hit
	for _, h := range hits {
		i, ok := at[h.Doc]
		if !ok {
			i = len(docs)
			at[h.Doc] = i
			docs = append(docs, nil)
		}
		if len(docs[i]) < perDoc {
			docs[i] = append(docs[i], h)
		}
	}
	out := make([]Hit, 0, len(hits))
	for _, d := range docs {
		out = append(out, d...)
	}
	return out
}

// Fuse merges ranked lists of hits by reciprocal rank fusion: a chunk's
// score is Σ w_i / (k + rank_i) over the lists that hold it (rank from 1;
// a chunk is the same in two lists when its document and start line are).
// keyword and vector are the two passes' hits, best first. The results
// come best first; overlapping chunks of one document are collapsed to
// the better one.
func Fuse(keyword, vector []Hit, w Weights, k float64) []Result {
	w = w.withDefaults()
	if k <= 0 {
		k = 60
	}
	byKey := map[chunkKey]*Result{}
	var all []*Result
	add := func(hits []Hit, weight float64, rank func(*Result) *int) {
		for i, h := range hits {
			key := chunkKey{h.Doc, h.Start}
			r := byKey[key]
			if r == nil {
				r = &Result{Chunk: h.Chunk}
				byKey[key] = r
				all = append(all, r)
			}
			if *rank(r) != 0 { // a pass listing a chunk twice: keep the better rank
				continue
			}
			*rank(r) = i + 1
			r.Score += weight / (k + float64(i+1))
		}
	}
	add(keyword, w.Keyword, func(r *Result) *int { return &r.KeywordRank })
	add(vector, w.Vector, func(r *Result) *int { return &r.VectorRank })
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if a.Doc != b.Doc {
			return a.Doc < b.Doc
		}
		return a.Start < b.Start
	})
	return collapse(all)
}

// collapse drops every result overlapping the lines of a better one of
// the same document.
func collapse(sorted []*Result) []Result {
	kept := map[string][]*Result{}
	out := make([]Result, 0, len(sorted))
	for _, r := range sorted {
		overlaps := false
		for _, o := range kept[r.Doc] {
			if r.Start <= o.End && o.Start <= r.End {
				overlaps = true
				break
			}
		}
		if overlaps {
			continue
		}
		kept[r.Doc] = append(kept[r.Doc], r)
		out = append(out, *r)
	}
	return out
}
