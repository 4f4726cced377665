-- Posting lists kb/sqlite stores and scores itself, in place of FTS5
-- (whose bm25() cost most of a keyword query). The lists of a database
-- made by 0001 are built from its stored chunks when it is next opened
-- (meta postings_stale; see build.go), in one transaction.

DROP TABLE chunk_vocab;
DROP TABLE chunk_terms;

-- chunks.length: how many terms the chunk holds (kb.ChunkTerms), for
-- BM25's length normalisation and the index's total. Chunk ids are from
-- now on handed out from meta next_chunk and never reused, so a dead
-- chunk's postings cannot be taken for a new chunk's.
ALTER TABLE chunks ADD COLUMN length INTEGER NOT NULL DEFAULT 0;

-- segments: the posting lists of the chunks of ids lo … hi (a write's
-- new chunks, or several adjacent segments merged). dead lists (encoded,
-- see postings.go) those of its chunks removed since: their postings
-- stay until the segment is merged, and queries skip them. chunks counts
-- the chunks it holds postings of, ndead the dead among them.
CREATE TABLE segments (
	id     INTEGER PRIMARY KEY,
	lo     INTEGER NOT NULL,
	hi     INTEGER NOT NULL,
	chunks INTEGER NOT NULL,
	ndead  INTEGER NOT NULL,
	dead   BLOB NOT NULL
) STRICT;
CREATE UNIQUE INDEX segments_lo ON segments (lo);

-- postings: a segment's term → posting list entries, in blocks of a few
-- KiB sorted by term; first is a block's first term (a term is looked up
-- in the last block whose first term is not after it).
CREATE TABLE postings (
	id    INTEGER PRIMARY KEY,
	seg   INTEGER NOT NULL REFERENCES segments (id) ON DELETE CASCADE,
	first BLOB NOT NULL,
	data  BLOB NOT NULL
) STRICT;
CREATE UNIQUE INDEX postings_seg ON postings (seg, first);

-- The index's totals (BM25's chunk count and average length), the next
-- chunk id, and whether the postings must be built from the chunks.
INSERT INTO meta (key, value) VALUES
	('chunks', 0),
	('length', 0),
	('next_chunk', (SELECT coalesce(max(id), 0) + 1 FROM chunks)),
	('postings_stale', (SELECT count(*) > 0 FROM chunks));
