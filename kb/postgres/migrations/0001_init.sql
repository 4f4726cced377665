-- The first schema of the PostgreSQL knowledge base. Several knowledge
-- bases (one a workspace) share a database: every table is keyed by
-- namespace. Paths sort in byte order (COLLATE "C"), as in every store.

-- kb_documents: one row an indexed document.
CREATE TABLE kb_documents (
	namespace text COLLATE "C" NOT NULL,
	path      text COLLATE "C" NOT NULL,
	hash      text NOT NULL,
	size      bigint NOT NULL,
	chunks    integer NOT NULL,
	embedding text NOT NULL,
	indexed   timestamptz NOT NULL,
	PRIMARY KEY (namespace, path)
);

-- kb_chunks: a document's chunks, ord 0, 1, 2, … in document order. tsv
-- holds rein's own terms of the chunk (kb.Terms) with their positions,
-- written as a tsvector literal rather than through to_tsvector, so
-- PostgreSQL's parser never re-splits them: rein decides the terms,
-- PostgreSQL matches and ranks them. terms is how many there are (the
-- chunk's length for ranking). vec is the chunk's embedding, NULL when it
-- has none: Debian 12 has no pgvector, so vectors are arrays scored in Go.
CREATE TABLE kb_chunks (
	namespace  text COLLATE "C" NOT NULL,
	path       text COLLATE "C" NOT NULL,
	ord        integer NOT NULL,
	start_line integer NOT NULL,
	end_line   integer NOT NULL,
	heading    text NOT NULL,
	body       text NOT NULL,
	tsv        tsvector NOT NULL,
	terms      integer NOT NULL,
	vec        real[],
	PRIMARY KEY (namespace, path, ord),
	FOREIGN KEY (namespace, path) REFERENCES kb_documents (namespace, path) ON DELETE CASCADE
);
CREATE INDEX kb_chunks_tsv ON kb_chunks USING gin (tsv);

-- kb_terms: per namespace and term, how many chunks hold the term (its
-- document frequency, BM25's idf needs it), kept by every write in its
-- transaction: counting them at query time would read every matching row.
CREATE TABLE kb_terms (
	namespace text COLLATE "C" NOT NULL,
	term      text COLLATE "C" NOT NULL,
	chunks    integer NOT NULL,
	PRIMARY KEY (namespace, term)
);

-- kb_namespaces: per namespace, a generation bumped in the transaction of
-- every write (so readers' caches see other processes' writes) and the
-- totals keyword ranking needs: chunks and their terms.
CREATE TABLE kb_namespaces (
	namespace  text COLLATE "C" PRIMARY KEY,
	generation bigint NOT NULL,
	chunks     bigint NOT NULL,
	terms      bigint NOT NULL
);
