package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/migration"
	"github.com/reinhq/rein/internal/sqlitedb"
	"github.com/reinhq/rein/kb"
)

// zipfText is a chunk of 1–15 words, alpha nearly everywhere, lambda
// rare.
func zipfText(rnd *rand.Rand) string {
	words := []string{"alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "lambda"}
	var sb strings.Builder
	for range 1 + rnd.IntN(15) {
		sb.WriteString(words[min(len(words)-1, int(rnd.ExpFloat64()*1.5))])
		sb.WriteByte(' ')
	}
	return sb.String()
}

var zipfQueries = []string{"lambda", "alpha", "kappa alpha", "sigma omega beta alpha",
	"lambda kappa sigma omega delta gamma beta alpha", "beta missing", "doc07"}

// sameAsMemory checks that s ranks every query as ref does: the same
// chunks with the same scores (ties in any order).
func sameAsMemory(t *testing.T, s *Store, ref *kb.Memory, step string) {
	t.Helper()
	for _, q := range zipfQueries {
		for _, k := range []int{3, 1000} {
			want, err := ref.Keyword(ctx, kb.Terms(q), k)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Keyword(ctx, kb.Terms(q), k)
			if err != nil {
				t.Fatalf("%s: Keyword(%q): %v", step, q, err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s: Keyword(%q, %d): %d hits, the memory backend gives %d", step, q, k, len(got), len(want))
			}
			for i := range got {
				if math.Abs(got[i].Score-want[i].Score) > 1e-9*want[i].Score {
					t.Fatalf("%s: Keyword(%q, %d): hit %d %s:%d scores %v, the memory backend's %s:%d %v",
						step, q, k, i, got[i].Doc, got[i].Start, got[i].Score, want[i].Doc, want[i].Start, want[i].Score)
				}
			}
			if k == 1000 {
				gotSet, wantSet := map[string]float64{}, map[string]float64{}
				for i := range got {
					gotSet[fmt.Sprintf("%s:%d", got[i].Doc, got[i].Start)] = got[i].Score
					wantSet[fmt.Sprintf("%s:%d", want[i].Doc, want[i].Start)] = want[i].Score
				}
				for c, sc := range wantSet {
					if g, ok := gotSet[c]; !ok || math.Abs(g-sc) > 1e-9*sc {
						t.Fatalf("%s: Keyword(%q): %s scores %v, the memory backend's %v", step, q, c, g, sc)
					}
				}
			}
		}
	}
}

// checkInvariants checks the segments and totals against the chunks.
func checkInvariants(t *testing.T, s *Store, step string) {
	t.Helper()
	segs, err := loadSegments(ctx, s.db)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	if len(segs) > maxSegments {
		t.Errorf("%s: %d segments, at most %d wanted", step, len(segs), maxSegments)
	}
	live := 0
	for _, sg := range segs {
		if 4*sg.ndead > sg.chunks || sg.live() == 0 {
			t.Errorf("%s: segment %d has %d dead of %d chunks: it should have been merged", step, sg.id, sg.ndead, sg.chunks)
		}
		live += sg.live()
	}
	m, err := readMeta(ctx, s.db)
	if err != nil {
		t.Fatal(err)
	}
	var chunks, length, maxID int64
	if err := s.db.QueryRow(`SELECT count(*), coalesce(sum(length), 0), coalesce(max(id), 0) FROM chunks`).Scan(&chunks, &length, &maxID); err != nil {
		t.Fatal(err)
	}
	if m.chunks != chunks || m.length != length || int64(live) != chunks || m.next <= maxID {
		t.Errorf("%s: meta chunks %d, length %d, next %d; segments' live chunks %d; the chunks table: %d chunks, length %d, last id %d",
			step, m.chunks, m.length, m.next, live, chunks, length, maxID)
	}
}

// Re-indexing and removing documents keeps the posting lists exact: after
// every step (puts, replacements, batches putting a path twice, deletes,
// with the merges and purges they cause), every query ranks as on the
// memory backend, with its scores, and the totals match the chunks
// (SPEC KB-4).
func TestIncrementalAsMemory_KB4(t *testing.T) {
	s := openTemp(t)
	ref := kb.NewMemory()
	rnd := rand.New(rand.NewPCG(27, 1))
	doc := func() (kb.Document, []kb.Chunk) {
		d := kb.Document{Path: fmt.Sprintf("doc%02d.md", rnd.IntN(24)), Hash: "h", Indexed: time.Unix(1, 0)}
		chunks := make([]kb.Chunk, rnd.IntN(5)) // sometimes none
		for i := range chunks {
			chunks[i] = kb.Chunk{Start: 10*i + 1, End: 10*i + 5, Text: zipfText(rnd)}
		}
		return d, chunks
	}
	for step := range 300 {
		name := fmt.Sprintf("step %d", step)
		switch op := rnd.IntN(10); {
		case op < 5:
			d, chunks := doc()
			if err := s.Put(ctx, d, chunks, nil); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			ref.Put(ctx, d, chunks, nil)
		case op < 8:
			var entries []kb.Entry
			for range 1 + rnd.IntN(6) { // paths may repeat: the last wins
				d, chunks := doc()
				entries = append(entries, kb.Entry{Doc: d, Chunks: chunks})
			}
			if err := s.PutBatch(ctx, entries); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			ref.PutBatch(ctx, entries)
		default:
			path := fmt.Sprintf("doc%02d.md", rnd.IntN(24))
			err, want := s.Delete(ctx, path), ref.Delete(ctx, path)
			if errors.Is(err, kb.ErrNotFound) != errors.Is(want, kb.ErrNotFound) || err != nil && !errors.Is(err, kb.ErrNotFound) {
				t.Fatalf("%s: Delete(%s) = %v, the memory backend's %v", name, path, err, want)
			}
		}
		sameAsMemory(t, s, ref, name)
		checkInvariants(t, s, name)
	}
}

// writeV1 makes a database of the first schema (FTS5), as the rein
// before posting lists wrote it, holding docs (path → chunk texts) with
// gaps in the chunk ids (removed chunks).
func writeV1(t *testing.T, path string, docs map[string][]string) {
	t.Helper()
	db, _, err := sqlitedb.Open(ctx, path, sqlitedb.Config{Name: "v1", Synchronous: "NORMAL", PageSize: 8192,
		SetUp: func(ctx2 context.Context, db *sql.DB) error {
			ms, err := migration.Load(migrationFiles, "migrations")
			if err != nil {
				return err
			}
			_, err = migrate(ctx2, db, ms[:1], time.Now())
			return err
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id := int64(0)
	for path, texts := range docs {
		if _, err := db.Exec(`INSERT INTO documents (path, hash, size, chunks, embedding, indexed) VALUES (?, 'h', 1, ?, '', 1)`, path, len(texts)); err != nil {
			t.Fatal(err)
		}
		for i, text := range texts {
			id += 2 // a gap: a chunk removed
			c := kb.Chunk{Doc: path, Start: 10*i + 1, End: 10*i + 5, Text: text}
			if _, err := db.Exec(`INSERT INTO chunks (id, doc, ord, start_line, end_line, heading, text) VALUES (?, ?, ?, ?, ?, '', ?)`,
				id, path, i, c.Start, c.End, text); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`INSERT INTO chunk_terms (rowid, terms) VALUES (?, ?)`, id, kb.JoinedChunkTerms(c)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A database of the first schema (FTS5) is migrated when opened: its
// posting lists are built from the stored chunks, and it then ranks and
// updates as a new one does (SPEC KB-4: every backend ranks alike).
func TestMigrateFromFTS5_KB4(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kb.db")
	rnd := rand.New(rand.NewPCG(3, 5))
	docs := map[string][]string{}
	ref := kb.NewMemory()
	for d := range 40 {
		p := fmt.Sprintf("doc%02d.md", d)
		var chunks []kb.Chunk
		for i := range 1 + rnd.IntN(4) {
			text := zipfText(rnd)
			docs[p] = append(docs[p], text)
			chunks = append(chunks, kb.Chunk{Start: 10*i + 1, End: 10*i + 5, Text: text})
		}
		ref.Put(ctx, kb.Document{Path: p}, chunks, nil)
	}
	writeV1(t, path, docs)
	s := openAt(t, path)
	sameAsMemory(t, s, ref, "after the migration")
	checkInvariants(t, s, "after the migration")
	for _, table := range []string{"chunk_terms", "chunk_vocab"} {
		var n int
		if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = ?`, table).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s is still there (%d, %v)", table, n, err)
		}
	}
	// New chunks take new ids, never an old one's.
	putTexts(t, s, "doc01.md", nil, "lambda lambda kappa")
	ref.Put(ctx, kb.Document{Path: "doc01.md"}, []kb.Chunk{{Start: 1, End: 5, Text: "lambda lambda kappa"}}, nil)
	if err := s.Delete(ctx, "doc02.md"); err != nil {
		t.Fatal(err)
	}
	ref.Delete(ctx, "doc02.md")
	sameAsMemory(t, s, ref, "after updates")
	checkInvariants(t, s, "after updates")
}

// Damage to the posting lists is an error, not a panic or a wrong
// ranking; a database whose lists are not built says what to run.
func TestDamagedPostings(t *testing.T) {
	s := openTemp(t)
	putTexts(t, s, "a.md", nil, "alpha beta", "beta gamma")
	if _, err := s.db.Exec(`UPDATE postings SET data = x'0561626364ff'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Keyword(ctx, []string{"beta"}, 5); !errors.Is(err, errCorrupt) {
		t.Errorf("Keyword over a damaged block: %v, want errCorrupt", err)
	}
	if _, err := s.db.Exec(`UPDATE segments SET dead = x'00', ndead = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Keyword(ctx, []string{"beta"}, 5); !errors.Is(err, errCorrupt) {
		t.Errorf("Keyword with damaged dead chunks: %v, want errCorrupt", err)
	}
	if err := s.Delete(ctx, "a.md"); !errors.Is(err, errCorrupt) {
		t.Errorf("Delete with damaged segments: %v, want errCorrupt", err)
	}
	if _, err := s.db.Exec(`UPDATE meta SET value = 1 WHERE key = 'postings_stale'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Keyword(ctx, []string{"beta"}, 5); !errors.Is(err, errStale) || !strings.Contains(err.Error(), "reindex") {
		t.Errorf("Keyword of unbuilt posting lists: %v, want errStale", err)
	}
}

// Chunk ids are never reused, so they spread with re-indexing: past
// maxDense a search gathers scores in a map, with the same results.
func TestSparseScores_KB4(t *testing.T) {
	s := openTemp(t)
	ref := kb.NewMemory()
	rnd := rand.New(rand.NewPCG(8, 8))
	put := func(d int) {
		p := fmt.Sprintf("doc%02d.md", d)
		chunks := []kb.Chunk{{Start: 1, End: 5, Text: zipfText(rnd)}, {Start: 11, End: 15, Text: zipfText(rnd)}}
		if err := s.Put(ctx, kb.Document{Path: p}, chunks, nil); err != nil {
			t.Fatal(err)
		}
		ref.Put(ctx, kb.Document{Path: p}, chunks, nil)
	}
	for d := range 10 {
		put(d)
	}
	if _, err := s.db.Exec(`UPDATE meta SET value = value + ? WHERE key = 'next_chunk'`, 2*maxDense); err != nil {
		t.Fatal(err)
	}
	for d := 5; d < 15; d++ {
		put(d)
	}
	segs, err := loadSegments(ctx, s.db)
	if err != nil || segs[len(segs)-1].hi-segs[0].lo < maxDense {
		t.Fatalf("segments %+v, %v: want ids spread wider than maxDense", segs, err)
	}
	sameAsMemory(t, s, ref, "ids spread")
	checkInvariants(t, s, "ids spread")
}
