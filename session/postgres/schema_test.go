package postgres

import (
	"errors"
	"github.com/reinhq/rein/internal/migration"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/session"
)

// appliedVersions returns the migrations recorded in c's schema.
func appliedVersions(t *testing.T, c *pgx.Conn) []int {
	t.Helper()
	rows, err := c.Query(ctx, `SELECT version FROM rein_schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tables returns the tables of schema.
func tables(t *testing.T, c *pgx.Conn, schema string) []string {
	t.Helper()
	rows, err := c.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`, schema)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Processes starting at once on an empty database take turns on the
// migration lock: every one opens, and each migration is applied once.
func TestMigrationRace(t *testing.T) {
	t.Parallel()
	u, schema := testSchema(t)
	const racers = 6
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range racers {
		wg.Go(func() {
			<-start
			st, err := Open(ctx, u, Options{})
			if err != nil {
				t.Errorf("Open racing %d others: %v", racers-1, err)
				return
			}
			st.Close()
		})
	}
	close(start)
	wg.Wait()
	ms, err := loadMigrations(migrationFiles, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	for _, m := range ms {
		want = append(want, m.Version)
	}
	c := rawConn(t, u)
	if diff := cmp.Diff(want, appliedVersions(t, c)); diff != "" {
		t.Errorf("applied migrations (-want +got):\n%s", diff)
	}
	wantTables := []string{"audit", "caller_rules", "entries", "events", "rein_schema_migrations", "runs", "session_fences", "session_seqs", "sessions", "workspaces"}
	if diff := cmp.Diff(wantTables, tables(t, c, schema)); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}
}

// A database written by a newer rein is refused, saying which versions and
// what to do.
func TestNewerSchema(t *testing.T) {
	t.Parallel()
	u, _ := testSchema(t)
	st, err := Open(ctx, u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := rawConn(t, u).Exec(ctx,
		`INSERT INTO rein_schema_migrations (version, name, applied_at) VALUES (99, '0099_future', now())`); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, u, Options{})
	want := "database schema version 99 is newer than this rein (3); upgrade rein"
	if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), want) {
		t.Errorf("Open of a newer database: %v; want ErrNewerSchema saying %q", err, want)
	}
}

// A migration that fails leaves the database as it was: the steps before it
// in the same run are rolled back too; fixed, it applies.
func TestMigrateAtomic(t *testing.T) {
	t.Parallel()
	u, schema := testSchema(t)
	c := rawConn(t, u)
	good := fstest.MapFS{"m/0001_a.sql": {Data: []byte("CREATE TABLE a (x integer);")}}
	load := func(fsys fstest.MapFS) []migration.Migration {
		ms, err := loadMigrations(fsys, "m")
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	if v, err := migrate(ctx, c, load(good), time.Now()); err != nil || v != 1 {
		t.Fatalf("migrate to 1: version %d, %v", v, err)
	}
	broken := fstest.MapFS{
		"m/0001_a.sql": good["m/0001_a.sql"],
		"m/0002_b.sql": {Data: []byte("CREATE TABLE b (x integer);")},
		"m/0003_c.sql": {Data: []byte("CREATE TABLE c (x integer); INSERT INTO nowhere VALUES (1);")},
	}
	if _, err := migrate(ctx, c, load(broken), time.Now()); err == nil || !strings.Contains(err.Error(), "0003_c") {
		t.Fatalf("a failing migration: %v, want an error naming 0003_c", err)
	}
	if diff := cmp.Diff([]string{"a", "rein_schema_migrations"}, tables(t, c, schema)); diff != "" {
		t.Errorf("tables after a failed migration (-want +got):\n%s", diff)
	}
	broken["m/0003_c.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE c (x integer);\nCREATE INDEX c_x ON c (x);")}
	if v, err := migrate(ctx, c, load(broken), time.Now()); err != nil || v != 3 {
		t.Fatalf("migrate to 3: version %d, %v", v, err)
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "rein_schema_migrations"}, tables(t, c, schema)); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}
	// Run again, it does nothing; run by an older rein, it refuses.
	if v, err := migrate(ctx, c, load(broken), time.Now()); err != nil || v != 3 {
		t.Errorf("migrate again: version %d, %v", v, err)
	}
	if _, err := migrate(ctx, c, load(good), time.Now()); !errors.Is(err, ErrNewerSchema) {
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

// What was written is there after the store is closed and opened again,
// seq counters included.
func TestReopen(t *testing.T) {
	t.Parallel()
	u, _ := testSchema(t)
	st, err := Open(ctx, u, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Create(ctx, &session.Session{ID: "s", Caller: "alice", Workspace: "w"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, "s", userEntry("a"), userEntry("b")); err != nil {
		t.Fatal(err)
	}
	if err := st.Rewrite(ctx, "s", nil); err != nil {
		t.Fatal(err)
	}
	run := &session.Run{SessionID: "s", Prompt: "hi"}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	st.Close()
	again := openStore(t, u, Options{})
	if last, err := again.Append(ctx, "s", userEntry("c")); err != nil || last != 3 {
		t.Errorf("Append after reopening: seq %d, %v; want 3 (seqs are never reused)", last, err)
	}
	if got, err := again.GetRun(ctx, run.ID); err != nil || got.Prompt != "hi" || got.Seq != run.Seq {
		t.Errorf("GetRun after reopening: %+v, %v", got, err)
	}
	next := &session.Run{SessionID: "s"}
	if err := again.CreateRun(ctx, next); err != nil || next.Seq <= run.Seq {
		t.Errorf("CreateRun after reopening: seq %d (%v), want above %d", next.Seq, err, run.Seq)
	}
	list, _, err := again.List(ctx, session.ListOptions{Caller: "alice", Workspace: "w"})
	if err != nil || len(list) != 1 {
		t.Errorf("List after reopening: %v, %v", list, err)
	}
}
