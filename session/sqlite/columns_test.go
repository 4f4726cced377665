package sqlite_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/sqlite"
)

// SESS-1: the columns List filters and orders by stay equal to the
// session's record whichever of them a write changes (a write sets only
// the columns that changed), through Update and AppendUpdate alike.
func TestSessionColumnsFollowRecord_SESS1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rein.db")
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &session.Session{Caller: "alice", Workspace: "w1", WorkDir: "/a", CreatedAt: t0}
	if err := st.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	check := func(step string) {
		t.Helper()
		var updated int64
		var dir, caller, ws, meta string
		if err := rawDB(t, path).QueryRow(`SELECT updated_at, work_dir, caller, workspace, meta FROM sessions WHERE id = ?`, s.ID).
			Scan(&updated, &dir, &caller, &ws, &meta); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		var rec session.Session
		if err := json.Unmarshal([]byte(meta), &rec); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if updated != rec.UpdatedAt.UnixNano() || dir != rec.WorkDir || caller != rec.Caller || ws != rec.Workspace {
			t.Errorf("%s: columns %d %q %q %q, record %d %q %q %q", step, updated, dir, caller, ws,
				rec.UpdatedAt.UnixNano(), rec.WorkDir, rec.Caller, rec.Workspace)
		}
		if !rec.CreatedAt.Equal(t0) {
			t.Errorf("%s: created %v, want %v", step, rec.CreatedAt, t0)
		}
		for _, o := range []session.ListOptions{{WorkDir: rec.WorkDir}, {Caller: rec.Caller}, {Workspace: rec.Workspace}} {
			page, _, err := st.List(ctx, o)
			if err != nil || len(page) != 1 || page[0].ID != s.ID {
				t.Errorf("%s: List(%+v) = %d sessions, %v; want the session", step, o, len(page), err)
			}
		}
	}
	check("created")
	hello := llm.UserText("hello")
	m := session.Entry{Kind: session.KindMessage, Message: &hello}
	change := func(f func(*session.Session)) func(*session.Session) bool {
		return func(ss *session.Session) bool { f(ss); return true }
	}
	steps := []struct {
		name string
		f    func(*session.Session)
	}{
		{"preview alone", func(ss *session.Session) { ss.Preview = "hello" }},
		{"updated_at", func(ss *session.Session) { ss.UpdatedAt = t0.Add(time.Hour) }},
		{"work dir", func(ss *session.Session) { ss.WorkDir = "/b" }},
		{"caller and workspace", func(ss *session.Session) { ss.Caller, ss.Workspace = "bob", "w2" }},
		{"all", func(ss *session.Session) {
			ss.UpdatedAt, ss.WorkDir, ss.Caller, ss.Workspace = t0.Add(2*time.Hour), "/c", "carol", "w3"
		}},
	}
	for _, step := range steps {
		if _, err := session.AppendUpdate(ctx, st, s.ID, []session.Entry{m}, change(step.f)); err != nil {
			t.Fatal(err)
		}
		check("AppendUpdate " + step.name)
		got, err := st.Get(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		step.f(got)
		got.WorkDir += "/u"
		if err := st.Update(ctx, got); err != nil {
			t.Fatal(err)
		}
		check("Update " + step.name)
	}
}
