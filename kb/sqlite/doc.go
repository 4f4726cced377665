// Package sqlite is the embedded knowledge-base backend (SPEC KB-3): a
// kb.Backend over one SQLite file (modernc.org/sqlite, pure Go), the
// default of a workspace (.rein/data/kb.db).
//
// A document is a row of documents and its chunks rows of chunks; each
// chunk's terms, as rein's analyser makes them (kb.ChunkTerms), are joined
// by spaces into a contentless FTS5 table (ascii tokenizer, which cuts
// exactly at those spaces), so SQLite never analyses text itself: rein
// decides the terms, FTS5 matches them (every term quoted, so no query
// text is ever FTS5 syntax) and ranks them by bm25, the same BM25 as every
// backend's (kb.BM25IDF). bm25 costs about 2 µs a matching chunk, so a
// query whose terms match more than a few thousand chunks skips those
// that cannot make the top k (MaxScore: its rarest terms choose the
// candidates, each scored on every term; see Store.Keyword), with exactly
// the full ranking's result. Vectors are little-endian
// float32 blobs beside the chunks; the first Vector query loads them all
// into memory and scores them by cosine in Go, writes of this process
// keep that copy in step, and a generation counter every write bumps
// tells a process that another one wrote, so it loads them again.
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
// written by a newer rein is refused ([ErrNewerSchema]).
package sqlite
