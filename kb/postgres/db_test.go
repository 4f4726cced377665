package postgres

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/kb"
	"github.com/reinhq/rein/kb/kbtest"
	"github.com/reinhq/rein/session/postgres/pgtest"
)

// openDB opens a DB on url, closed when the test ends.
func openDB(t testing.TB, url string) *DB {
	t.Helper()
	d, err := OpenDB(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// dbStore is d's store of namespace ns.
func dbStore(t testing.TB, d *DB, ns string) *Store {
	t.Helper()
	s, err := d.Store(ns)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// KB-3: the stores of one DB pass the conformance suite, as Open's do.
func TestConformanceDB(t *testing.T) {
	kbtest.Run(t, func(t *testing.T) kb.Backend {
		u, _ := pgtest.Schema(t)
		return dbStore(t, openDB(t, u), "conformance")
	})
}

// KB-3, API-9: the namespaces of one DB are apart; closing a store leaves
// the DB and its other stores working; Exists says whether a namespace
// was ever written; a second DB (another process) sees the first's writes.
func TestDBNamespaces(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	d := openDB(t, u)
	a, b := dbStore(t, d, "caller/a/ws/1"), dbStore(t, d, "caller/b/ws/1")
	for _, s := range []*Store{a, b} {
		if ok, err := s.Exists(ctx); err != nil || ok {
			t.Fatalf("%s exists before any write: %v, %v", s.Namespace(), ok, err)
		}
	}
	put(t, a, doc("a.md", []string{"kestrel runbook"}, nil))
	if ok, err := a.Exists(ctx); err != nil || !ok {
		t.Errorf("a exists after a put: %v, %v", ok, err)
	}
	if ok, err := b.Exists(ctx); err != nil || ok {
		t.Errorf("b exists after a's put: %v, %v", ok, err)
	}
	if got := keyword(t, b, "kestrel"); len(got) != 0 {
		t.Errorf("b finds a's document: %v", got)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	put(t, b, doc("b.md", []string{"heron runbook"}, nil))
	again := dbStore(t, d, "caller/a/ws/1")
	if got := keyword(t, again, "kestrel"); len(got) != 1 {
		t.Errorf("a's namespace reopened after a store of it closed: %v", got)
	}
	if got := keyword(t, again, "heron"); len(got) != 0 {
		t.Errorf("a finds b's document: %v", got)
	}
	other := dbStore(t, openDB(t, u), "caller/b/ws/1")
	if got := keyword(t, other, "heron"); len(got) != 1 {
		t.Errorf("a second DB on the database does not see b's document: %v", got)
	}
	if err := d.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}
	if !strings.Contains(d.Target(), ":") {
		t.Errorf("target %q: want host:port", d.Target())
	}
}

// Bad namespaces are refused by DB.Store as by Open, saying what is wanted.
func TestDBBadNamespace(t *testing.T) {
	t.Parallel()
	u, _ := pgtest.Schema(t)
	d := openDB(t, u)
	for _, ns := range []string{"a\x00b", "\xff", strings.Repeat("n", maxNamespace+1)} {
		if _, err := d.Store(ns); err == nil || !strings.Contains(err.Error(), "want UTF-8 text") {
			t.Errorf("Store(%q): %v, want a refusal saying what is wanted", ns, err)
		}
	}
	if _, err := d.Store(strings.Repeat("n", maxNamespace)); err != nil {
		t.Errorf("a namespace of %d bytes: %v", maxNamespace, err)
	}
}

// BenchmarkExists measures what a server's run pays at its start to learn
// whether its workspace has a knowledge base in PostgreSQL (kb_search is
// offered then): a store of the DB (no connection) and one Exists query,
// among 1,000 namespaces.
func BenchmarkExists(b *testing.B) {
	u, _ := pgtest.Schema(b)
	d := openDB(b, u)
	for i := range 1000 {
		s := dbStore(b, d, fmt.Sprintf("caller/c%d/ws/w", i))
		if err := s.Put(ctx, kb.Document{Path: "a.md", Hash: "h", Indexed: time.Unix(1700000000, 0)},
			[]kb.Chunk{{Doc: "a.md", Start: 1, End: 1, Text: "word"}}, nil); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; b.Loop(); i++ {
		s, err := d.Store(fmt.Sprintf("caller/c%d/ws/w", i%2000)) // half of them absent
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Exists(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
