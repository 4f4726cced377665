// Package postgres is the production knowledge-base backend (SPEC KB-3):
// a kb.Backend over PostgreSQL with github.com/jackc/pgx/v5.
//
// Several knowledge bases (one a workspace) share a database: every table
// is keyed by a namespace, and a Store serves the one Options.Namespace
// names. A server with many of them opens the database once ([OpenDB])
// and a Store per namespace over its connections ([DB.Store]). A document is a row of kb_documents and its chunks rows of
// kb_chunks; Put and Delete are one transaction each, so a reader sees a
// document's old chunks or its new ones, never a mix.
//
// Keyword pass: rein's own analyser (kb.Terms) decides a chunk's terms;
// they are stored, with their positions, as a tsvector literal built in Go
// (never through to_tsvector, whose parser would split them again) under
// a GIN index. A query is a tsquery 't1' | 't2' | … built the same way and
// passed as a parameter, so no text of the caller's ever becomes SQL. The
// matching chunks are ranked by BM25 (k1 1.2, b 0.75, as the memory and
// SQLite backends rank) computed in SQL: term frequencies from the
// tsvector's positions, chunk lengths from a column, document frequencies
// from kb_terms, which every write keeps in its transaction. A query skips
// the chunks that only its common terms match when they cannot make the
// top k (MaxScore), with exactly the full ranking's result. ts_rank_cd,
// PostgreSQL's own ranking, has no inverse document frequency: on the
// retrieval evaluation (bench/kbeval) it found a tenth as many answers.
//
// Vector pass: Debian 12 has no pgvector, so embeddings are real[]
// columns scored in Go. The first Vector query of a Store loads the
// namespace's vectors into memory (4·dimension bytes a chunk: 64 MB for
// 64,000 chunks of 256 dimensions); the cache stays valid while the
// namespace's generation, a counter every write bumps in its own
// transaction, is unchanged, so writes of other processes are seen at the
// next query. Each query reads the generation and the chunks it returns
// in one snapshot, so it never mixes two versions of a document.
//
// The schema is a list of embedded SQL migrations (migrations/), applied
// at Open in one transaction under an advisory lock and recorded in
// rein_kb_migrations, independent of the session store's; a database
// written by a newer rein is refused ([ErrNewerSchema]).
package postgres
