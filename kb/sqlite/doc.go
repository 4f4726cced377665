// Package sqlite is the embedded knowledge-base backend (SPEC KB-3): a
// kb.Backend over one SQLite file (modernc.org/sqlite, pure Go), the
// default of a workspace (.rein/data/kb.db).
//
// A document is a row of documents and its chunks rows of chunks. The
// keyword pass reads posting lists this package stores itself and scores
// them in Go with the memory backend's BM25 (kb.BM25IDF, kb.BM25Score),
// so every backend ranks alike. Each write analyses its new chunks
// (kb.ChunkTerms) into lists of term → (chunk id, term frequency, chunk
// length), packed in blocks of a few KiB sorted by term (postings.go),
// and stores them as one segment in the write's own transaction; a
// removed chunk is listed as dead in the segment holding it, and adjacent
// segments are merged, dropping the dead chunks' postings, so that a term
// is read from a few segments (segments.go). A query reads each term's
// list from every segment, skips the dead chunks, and scores every chunk
// holding a term (keyword.go): exact, with no pruning to get wrong. Chunk
// ids are never reused. Vectors are little-endian float32 blobs beside
// the chunks; the first Vector query loads them all into memory and
// scores them by cosine in Go, writes of this process keep that copy in
// step, and a generation counter every write bumps tells a process that
// another one wrote, so it loads them again.
//
// Every write is one transaction (Put, Delete, and PutBatch for many
// documents at once): a reader sees a document's old chunks or its new
// ones, never a mix, and a refused write leaves everything as it was.
// Writes of the process run one at a time; another process writing the
// same file is waited for up to Options.BusyTimeout. The database runs in
// WAL mode, synchronous=NORMAL unless Options.Durable: the index is
// derived from files and rebuilt by a re-index.
//
// The schema is a list of embedded SQL migrations (migrations/), applied
// at Open in one transaction and recorded in schema_version; a database
// written by a newer rein is refused ([ErrNewerSchema]). A database of
// the first schema (FTS5) gets its posting lists built from its stored
// chunks at Open (build.go).
package sqlite
