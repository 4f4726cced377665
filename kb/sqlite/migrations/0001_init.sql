-- The first schema of the SQLite knowledge base (kb/sqlite).

-- documents: one row an indexed document. indexed is Unix nanoseconds.
CREATE TABLE documents (
	path      TEXT PRIMARY KEY,
	hash      TEXT NOT NULL,
	size      INTEGER NOT NULL,
	chunks    INTEGER NOT NULL,
	embedding TEXT NOT NULL,
	indexed   INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- chunks: a document's chunks, ord 0, 1, 2, … in document order; the
-- id is the rowid of the chunk's row in chunk_terms and vectors.
CREATE TABLE chunks (
	id         INTEGER PRIMARY KEY,
	doc        TEXT NOT NULL REFERENCES documents (path) ON DELETE CASCADE,
	ord        INTEGER NOT NULL,
	start_line INTEGER NOT NULL,
	end_line   INTEGER NOT NULL,
	heading    TEXT NOT NULL,
	text       TEXT NOT NULL
) STRICT;
CREATE INDEX chunks_doc ON chunks (doc, ord);

-- chunk_terms: the full-text index. A row holds a chunk's terms as rein's
-- analyser made them (kb.ChunkTerms), joined by spaces, so SQLite never
-- analyses text itself: rein decides the terms, FTS5 matches and ranks
-- them (bm25). The ascii tokenizer splits on ASCII characters other than
-- letters and digits and keeps every other character: rein's terms are
-- made of letters, digits and marks only, so it cuts exactly at the
-- spaces between them, and fast. Contentless: the terms are indexed, not
-- stored a second time.
CREATE VIRTUAL TABLE chunk_terms USING fts5 (
	terms,
	content = '',
	contentless_delete = 1,
	tokenize = 'ascii'
);
-- Index writes gather up to 16 MiB of terms in memory before flushing a
-- segment to disk (the default, 1 MiB, makes bulk indexing merge
-- segments over and over).
INSERT INTO chunk_terms (chunk_terms, rank) VALUES ('hashsize', 16777216);

-- chunk_vocab: how many chunks hold each term (a keyword query chooses
-- how to rank by it).
CREATE VIRTUAL TABLE chunk_vocab USING fts5vocab (chunk_terms, 'row');

-- vectors: a chunk's embedding, dim little-endian float32s.
CREATE TABLE vectors (
	chunk_id INTEGER PRIMARY KEY REFERENCES chunks (id) ON DELETE CASCADE,
	dim      INTEGER NOT NULL,
	vec      BLOB NOT NULL
) STRICT;

-- meta: the generation, bumped by every write, so a process's cache of
-- vectors sees the writes of others.
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO meta (key, value) VALUES ('generation', 0);
