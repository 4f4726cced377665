// Package kb is rein's knowledge base (SPEC KB-1 … KB-3): documents are cut
// into chunks on line boundaries with overlap (Split), each chunk gets a
// full-text entry under rein's own code-aware terms (Terms, the same for
// every backend) and, when an embedding model is configured, a vector; a
// search runs a keyword pass (BM25) and a vector pass (cosine) and fuses
// them by reciprocal rank fusion (Fuse).
//
// A Backend stores chunks and answers the two passes (a Batcher also
// writes many documents at once); Base puts the pieces together: it walks
// and reads files under a root (skipping, with a reason, what cannot be
// indexed), indexes them incrementally by content hash, embeds chunks,
// and searches: fuses, deduplicates, thresholds and cuts. Backends:
// NewMemory (tests, ephemeral), kb/sqlite (the embedded default: posting
// lists and vectors in one SQLite file), kb/postgres (production). Every
// backend passes the conformance suite in kb/kbtest.
package kb

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Document is one indexed file (or text) of a knowledge base.
type Document struct {
	// Path names the document: a slash-separated path relative to the
	// root it was added from, or a name the caller chose. Unique.
	Path string `json:"path"`
	// Hash is the hex SHA-256 of the content it was indexed from and,
	// after a "+", the IndexVersion of its analysis: a re-index skips a
	// document whose hash and embedding are unchanged.
	Hash string `json:"hash"`
	// Size is the content's length in bytes; Chunks how many chunks it has.
	Size   int64 `json:"size"`
	Chunks int   `json:"chunks"`
	// Embedding names the model its vectors came from ("" when the chunks
	// have none): changing the model re-embeds.
	Embedding string `json:"embedding,omitempty"`
	// Indexed is when it was last indexed.
	Indexed time.Time `json:"indexed"`
}

// Chunk is a run of whole lines of a document.
type Chunk struct {
	// Doc is the document's Path.
	Doc string `json:"doc"`
	// Start and End are the 1-based first and last lines, inclusive.
	Start int `json:"start"`
	End   int `json:"end"`
	// Heading is the nearest Markdown heading above the chunk (or the
	// enclosing Go declaration), "" when none: shown with a hit.
	Heading string `json:"heading,omitempty"`
	// Text is the chunk's lines.
	Text string `json:"text"`
}

// Hit is a chunk a pass found, with its score in that pass (higher is
// better; scores of different passes do not compare).
type Hit struct {
	Chunk
	Score float64 `json:"score"`
}

// Backend stores the chunks of a knowledge base and answers the keyword
// and vector passes. Implementations are safe for concurrent use. Put and
// Delete are atomic: a reader sees a document's old chunks or its new ones,
// never a mix, and a failed Put leaves the old ones.
type Backend interface {
	// Put replaces doc's chunks (and vectors: nil when none, else one per
	// chunk, each of the same non-zero dimension) with these; the stored
	// Document's Chunks is len(chunks). Vectors of the wrong count or of
	// mixed dimensions are refused with an error before anything is
	// written.
	Put(ctx context.Context, doc Document, chunks []Chunk, vectors [][]float32) error
	// Delete removes a document and its chunks; ErrNotFound when absent.
	Delete(ctx context.Context, path string) error
	// Documents lists every document, ordered by Path.
	Documents(ctx context.Context) ([]Document, error)
	// Keyword returns up to k chunks matching any of terms (as Terms
	// produces them), best first by BM25 or the backend's nearest
	// equivalent. No terms: no hits.
	Keyword(ctx context.Context, terms []string, k int) ([]Hit, error)
	// Vector returns up to k chunks with vectors, best first by cosine
	// similarity to vec (Score is the similarity). Chunks whose vectors
	// have another dimension than vec's (another model's) are not
	// compared; a backend without vectors returns no hits.
	Vector(ctx context.Context, vec []float32, k int) ([]Hit, error)
	// Close releases the backend.
	Close() error
}

// Entry is one document's worth of a Put: the document, its chunks and
// their vectors (nil when none).
type Entry struct {
	Doc     Document
	Chunks  []Chunk
	Vectors [][]float32
}

// Batcher is an optional interface of a Backend that stores several
// documents in one write (one transaction), much faster than a Put each
// where a write costs a sync. PutBatch is Put for each entry, all of them
// or none: a bad entry fails the whole batch before anything is written.
// Base uses it when the backend has it.
type Batcher interface {
	PutBatch(ctx context.Context, entries []Entry) error
}

// Embedder turns texts into vectors, one per text, all of one dimension
// (llm.Embedder satisfies it; kb does not import llm).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// ErrNotFound is returned for a document that is not in the base.
var ErrNotFound = errors.New("kb: document not found")

// CheckVectors checks the vectors a Put was given for n chunks: nil, or
// one per chunk, all of one non-zero dimension, every component finite.
// Backends call it before writing.
func CheckVectors(n int, vectors [][]float32) error {
	if vectors == nil {
		return nil
	}
	if len(vectors) != n {
		return fmt.Errorf("%d vectors for %d chunks: want one per chunk, or none", len(vectors), n)
	}
	for i, v := range vectors {
		if len(v) == 0 || len(v) != len(vectors[0]) {
			return fmt.Errorf("chunk %d: a vector of %d dimensions, the first has %d: want one non-zero dimension for all",
				i, len(v), len(vectors[0]))
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("chunk %d: the vector has a component %v: want finite numbers (is the embedding model broken?)", i, x)
			}
		}
	}
	return nil
}
