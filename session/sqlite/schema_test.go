package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"github.com/reinhq/rein/internal/migration"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func openRaw(t *testing.T) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raw.db")
	db, err := sql.Open("sqlite", dsn(path, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func tables(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var name string
		rows.Scan(&name)
		out = append(out, name)
	}
	return out
}

// A migration that fails leaves the database as it was: the steps before it
// in the same run are rolled back too; fixed, it applies.
func TestMigrateAtomic(t *testing.T) {
	ctx := context.Background()
	db := openRaw(t)
	good := fstest.MapFS{"m/0001_a.sql": {Data: []byte("CREATE TABLE a (x INTEGER);")}}
	load := func(fsys fstest.MapFS) []migration.Migration {
		ms, err := loadMigrations(fsys, "m")
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	if v, err := migrate(ctx, db, load(good), time.Now()); err != nil || v != 1 {
		t.Fatalf("migrate to 1: version %d, %v", v, err)
	}
	broken := fstest.MapFS{
		"m/0001_a.sql": good["m/0001_a.sql"],
		"m/0002_b.sql": {Data: []byte("CREATE TABLE b (x INTEGER);")},
		"m/0003_c.sql": {Data: []byte("CREATE TABLE c (x INTEGER); INSERT INTO nowhere VALUES (1);")},
	}
	if _, err := migrate(ctx, db, load(broken), time.Now()); err == nil || !strings.Contains(err.Error(), "0003_c") {
		t.Fatalf("a failing migration: %v, want an error naming 0003_c", err)
	}
	if diff := cmp.Diff([]string{"a", "schema_version"}, tables(t, db)); diff != "" {
		t.Errorf("tables after a failed migration (-want +got):\n%s", diff)
	}
	broken["m/0003_c.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE c (x INTEGER);\nCREATE INDEX c_x ON c (x);")}
	if v, err := migrate(ctx, db, load(broken), time.Now()); err != nil || v != 3 {
		t.Fatalf("migrate to 3: version %d, %v", v, err)
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "schema_version"}, tables(t, db)); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}
	// Run again, it does nothing; run by an older rein, it refuses.
	if v, err := migrate(ctx, db, load(broken), time.Now()); err != nil || v != 3 {
		t.Errorf("migrate again: version %d, %v", v, err)
	}
	if _, err := migrate(ctx, db, load(good), time.Now()); !errors.Is(err, ErrNewerSchema) {
		t.Errorf("migrate with fewer migrations than applied: %v, want ErrNewerSchema", err)
	}
}

func TestLoadMigrations(t *testing.T) {
	ms, err := loadMigrations(migrationFiles, "migrations")
	if err != nil {
		t.Fatalf("the embedded migrations: %v", err)
	}
	for i, m := range ms {
		if m.Version != i+1 || m.SQL == "" {
			t.Errorf("migration %d: %+v", i, m)
		}
	}
	for name, fsys := range map[string]fstest.MapFS{
		"gap":      {"m/0001_a.sql": {}, "m/0003_c.sql": {}},
		"no name":  {"m/0001.sql": {}},
		"not num":  {"m/one_a.sql": {}},
		"starts 2": {"m/0002_b.sql": {}},
		"empty":    {"m/README": {}},
	} {
		if _, err := loadMigrations(fsys, "m"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// Every connection of the pool has the settings of the DSN.
func TestPragmas(t *testing.T) {
	for _, tt := range []struct {
		sync Sync
		want int // PRAGMA synchronous: 1 NORMAL, 2 FULL
	}{{SyncFull, 2}, {SyncNormal, 1}} {
		st, err := Open(filepath.Join(t.TempDir(), "p.db"), Options{Sync: tt.sync, MaxConns: 3, BusyTimeout: 1500 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		// Hold every connection at once, so each is a different one: the
		// writer's, and the two others of the pool.
		conns := []*sql.Conn{st.writer.w.conn}
		for range 2 {
			c, err := st.db.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		for i, c := range conns {
			var mode string
			var sync, fk, busy int
			row := c.QueryRowContext(context.Background(), `SELECT (SELECT journal_mode FROM pragma_journal_mode),
				(SELECT synchronous FROM pragma_synchronous), (SELECT foreign_keys FROM pragma_foreign_keys),
				(SELECT timeout FROM pragma_busy_timeout)`)
			if err := row.Scan(&mode, &sync, &fk, &busy); err != nil {
				t.Fatal(err)
			}
			if mode != "wal" || sync != tt.want || fk != 1 || busy != 1500 {
				t.Errorf("connection %d: journal %s, synchronous %d, foreign keys %d, busy timeout %d; want wal, %d, 1, 1500",
					i, mode, sync, fk, busy, tt.want)
			}
			if i > 0 {
				c.Close()
			}
		}
		st.Close()
	}
}
