package kb

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
)

// Memory is a Backend in memory: BM25 over postings maps for the keyword
// pass, brute-force cosine for the vector pass. For tests and ephemeral
// bases; it is safe for concurrent use and also a Batcher.
type Memory struct {
	mu     sync.RWMutex
	docs   map[string]*memDoc
	chunks map[int]*memChunk
	next   int
	index  *bm25Index
}

type memDoc struct {
	doc Document
	ids []int
}

type memChunk struct {
	chunk  Chunk
	counts map[string]int32
	vec    []float32 // unit length; nil when none or zero
}

var (
	_ Backend = (*Memory)(nil)
	_ Batcher = (*Memory)(nil)
)

// NewMemory returns an empty in-memory backend.
func NewMemory() *Memory {
	return &Memory{docs: map[string]*memDoc{}, chunks: map[int]*memChunk{}, index: newBM25()}
}

// prepared is an entry with its chunks analysed, ready to swap in.
type prepared struct {
	doc    Document
	chunks []*memChunk
	terms  []int
}

func prepareEntry(e Entry) (prepared, error) {
	if e.Doc.Path == "" {
		return prepared{}, fmt.Errorf("kb: put: the document has no path")
	}
	if err := CheckVectors(len(e.Chunks), e.Vectors); err != nil {
		return prepared{}, fmt.Errorf("kb %s: put: %w", e.Doc.Path, err)
	}
	p := prepared{doc: e.Doc, chunks: make([]*memChunk, len(e.Chunks)), terms: make([]int, len(e.Chunks))}
	p.doc.Chunks = len(e.Chunks)
	for i, c := range e.Chunks {
		c.Doc = e.Doc.Path
		terms := ChunkTerms(c)
		mc := &memChunk{chunk: c, counts: termCounts(terms)}
		if e.Vectors != nil {
			mc.vec = Unit(e.Vectors[i])
		}
		p.chunks[i], p.terms[i] = mc, len(terms)
	}
	return p, nil
}

// Put replaces a document's chunks and vectors.
func (m *Memory) Put(ctx context.Context, doc Document, chunks []Chunk, vectors [][]float32) error {
	return m.PutBatch(ctx, []Entry{{Doc: doc, Chunks: chunks, Vectors: vectors}})
}

// PutBatch puts several documents at once, all or none.
func (m *Memory) PutBatch(ctx context.Context, entries []Entry) error {
	ps := make([]prepared, len(entries))
	for i, e := range entries {
		p, err := prepareEntry(e)
		if err != nil {
			return err
		}
		ps[i] = p
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range ps {
		m.drop(p.doc.Path)
		d := &memDoc{doc: p.doc, ids: make([]int, len(p.chunks))}
		for i, c := range p.chunks {
			m.next++
			m.chunks[m.next] = c
			m.index.add(m.next, c.counts, p.terms[i])
			d.ids[i] = m.next
		}
		m.docs[p.doc.Path] = d
	}
	return nil
}

// drop removes a document; the caller holds the write lock.
func (m *Memory) drop(path string) bool {
	d, ok := m.docs[path]
	if !ok {
		return false
	}
	for _, id := range d.ids {
		m.index.remove(id, m.chunks[id].counts)
		delete(m.chunks, id)
	}
	delete(m.docs, path)
	return true
}

// Delete removes a document; ErrNotFound when absent.
func (m *Memory) Delete(ctx context.Context, path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.drop(path) {
		return fmt.Errorf("kb %s: delete: %w", path, ErrNotFound)
	}
	return nil
}

// Documents lists the documents by path.
func (m *Memory) Documents(ctx context.Context) ([]Document, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]Document, 0, len(m.docs))
	for _, d := range m.docs {
		out = append(out, d.doc)
	}
	slices.SortFunc(out, func(a, b Document) int { return cmp.Compare(a.Path, b.Path) })
	return out, nil
}

// Keyword ranks the chunks holding any of terms by BM25.
func (m *Memory) Keyword(ctx context.Context, terms []string, k int) ([]Hit, error) {
	if len(terms) == 0 || k < 1 {
		return nil, nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	found := m.index.search(terms, k, m.chunkLess)
	hits := make([]Hit, len(found))
	for i, f := range found {
		hits[i] = Hit{Chunk: m.chunks[f.id].chunk, Score: f.score}
	}
	return hits, nil
}

// chunkLess orders chunks of equal score by document and first line, as
// every backend breaks ties; the caller holds the lock.
func (m *Memory) chunkLess(a, b int) bool {
	ca, cb := &m.chunks[a].chunk, &m.chunks[b].chunk
	if ca.Doc != cb.Doc {
		return ca.Doc < cb.Doc
	}
	return ca.Start < cb.Start
}

// Vector ranks the chunks with vectors of vec's dimension by cosine
// similarity.
func (m *Memory) Vector(ctx context.Context, vec []float32, k int) ([]Hit, error) {
	q := Unit(vec)
	if q == nil || k < 1 {
		return nil, nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	scores := make([]float64, m.next+1)
	var ids []int32
	for id, c := range m.chunks {
		if len(c.vec) != len(q) {
			continue
		}
		scores[id] = Dot(q, c.vec)
		ids = append(ids, int32(id))
	}
	found := topK(scores, ids, k, m.chunkLess)
	hits := make([]Hit, len(found))
	for i, f := range found {
		hits[i] = Hit{Chunk: m.chunks[f.id].chunk, Score: f.score}
	}
	return hits, nil
}

// Close does nothing: the memory is the garbage collector's.
func (m *Memory) Close() error { return nil }

// hitLess orders hits best first, ties by document and line.
func hitLess(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if a.Doc != b.Doc {
		return a.Doc < b.Doc
	}
	return a.Start < b.Start
}
