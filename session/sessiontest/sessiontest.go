// Package sessiontest is the conformance suite every session.Store passes:
// the memory store, the JSONL file store, and the SQL stores.
//
// A store's test calls [Run] with a constructor giving a fresh, empty store
// for each subtest. The suite checks metadata (create, get, list newest
// first with paging and a directory filter, update, delete), the log
// (increasing seqs, reading after a seq, every entry kind round-tripping,
// fork at an entry and inside a tool call's pair, atomic rewrite),
// concurrent appends to one and to many sessions, and the errors callers
// test: ErrNotFound, ErrExists, ErrInvalid.
package sessiontest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reinhq/rein/session"
)

// Run runs the conformance suite. newStore returns an empty store; it is
// called once per subtest and may register cleanups on t.
func Run(t *testing.T, newStore func(t *testing.T) session.Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, session.Store)
	}{
		{"CreateGet", testCreateGet},
		{"BadInput", testBadInput},
		{"NotFound", testNotFound},
		{"List", testList},
		{"ListFilters", testListFilters},
		{"Append", testAppend},
		{"EntryKinds", testEntryKinds},
		{"Delete", testDelete},
		{"Fork", testFork},
		{"Rewrite", testRewrite},
		{"Update", testUpdate},
		{"AppendUpdate", testAppendUpdate},
		{"ConcurrentSessions", testConcurrentSessions},
		{"ConcurrentSameSession", testConcurrentSameSession},
		{"LoadHeals", testLoadHeals},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newStore(t)) })
	}
}

// Opts compares sessions and entries as stores must keep them: times to
// the millisecond, JSON inputs by value, not by bytes.
var Opts = cmp.Options{
	cmpopts.EquateApproxTime(time.Millisecond),
	cmpopts.EquateEmpty(),
	cmp.FilterPath(func(p cmp.Path) bool { return p.Last().Type() == rawType },
		cmp.FilterValues(func(x, y json.RawMessage) bool { return len(x) > 0 || len(y) > 0 },
			cmp.Transformer("json", func(r json.RawMessage) any {
				var v any
				if json.Unmarshal(r, &v) != nil {
					return string(r)
				}
				return v
			}))),
}

var rawType = reflect.TypeFor[json.RawMessage]()

func testCreateGet(t *testing.T, st session.Store) {
	ctx := t.Context()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	s := &session.Session{ID: "s-1", WorkDir: "/w", Title: "t", Preview: "hello", CreatedAt: t0, UpdatedAt: t0.Add(time.Second),
		Model: "anthropic/claude", CostUSD: 0.5, Runs: 2, PermissionMode: "plan"}
	s.Usage.InputTokens, s.Usage.OutputTokens = 10, 20
	mustCreate(t, st, s)
	got, err := st.Get(ctx, "s-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, got, Opts); diff != "" {
		t.Errorf("Get (-created +got):\n%s", diff)
	}
	got.Title = "changed"
	if again, _ := st.Get(ctx, "s-1"); again.Title != "t" {
		t.Errorf("changing a returned session changed the store: title %q", again.Title)
	}
	if err := st.Create(ctx, &session.Session{ID: "s-1"}); !errors.Is(err, session.ErrExists) {
		t.Errorf("Create of an existing id: %v, want ErrExists", err)
	}
	auto := &session.Session{WorkDir: "/w"}
	before := time.Now().Add(-time.Second)
	mustCreate(t, st, auto)
	if err := session.ValidID(auto.ID); err != nil {
		t.Errorf("Create assigned id %q: %v", auto.ID, err)
	}
	if auto.CreatedAt.Before(before) || auto.UpdatedAt.Before(before) {
		t.Errorf("Create left times %v, %v", auto.CreatedAt, auto.UpdatedAt)
	}
	if _, err := st.Get(ctx, auto.ID); err != nil {
		t.Errorf("Get of the assigned id: %v", err)
	}
}

func testBadInput(t *testing.T, st session.Store) {
	ctx := t.Context()
	mustCreate(t, st, &session.Session{ID: "ok"})
	msg := userEntry("hi")
	checks := map[string]error{
		"Create(nil)":        st.Create(ctx, nil),
		"Create(bad id)":     st.Create(ctx, &session.Session{ID: "../x"}),
		"Update(nil)":        st.Update(ctx, nil),
		"Update(empty id)":   st.Update(ctx, &session.Session{}),
		"Delete(empty)":      st.Delete(ctx, ""),
		"Rewrite(empty)":     st.Rewrite(ctx, "", nil),
		"Entries(empty)":     firstErr(ctx, st, ""),
		"Entries(slash)":     firstErr(ctx, st, "a/b"),
		"Append(no payload)": appendErr(ctx, st, "ok", session.Entry{Kind: session.KindMessage}),
		"Append(bad kind)":   appendErr(ctx, st, "ok", session.Entry{Kind: "nope", Message: msg.Message}),
		"Append(empty id)":   appendErr(ctx, st, "", msg),
	}
	_, err := st.Get(ctx, "")
	checks["Get(empty)"] = err
	_, err = st.Fork(ctx, "", 0)
	checks["Fork(empty)"] = err
	_, _, err = st.List(ctx, session.ListOptions{Cursor: "not a cursor!"})
	checks["List(bad cursor)"] = err
	for name, err := range checks {
		if !errors.Is(err, session.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	// The "two payloads" check needs a non-nil second payload.
	bad := msg
	bad.Run = &session.RunRecord{ID: "r"}
	if err := appendErr(ctx, st, "ok", msg, bad); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("Append(two payloads): %v, want ErrInvalid", err)
	}
	if n := len(readAll(t, st, "ok", 0)); n != 0 {
		t.Errorf("a rejected batch left %d entries; want none", n)
	}
}

func testNotFound(t *testing.T, st session.Store) {
	ctx := t.Context()
	checks := map[string]error{
		"Update":  st.Update(ctx, &session.Session{ID: "nope"}),
		"Delete":  st.Delete(ctx, "nope"),
		"Rewrite": st.Rewrite(ctx, "nope", nil),
		"Append":  appendErr(ctx, st, "nope", userEntry("x")),
		"Entries": firstErr(ctx, st, "nope"),
	}
	_, err := st.Get(ctx, "nope")
	checks["Get"] = err
	_, err = st.Fork(ctx, "nope", 0)
	checks["Fork"] = err
	for name, err := range checks {
		if !errors.Is(err, session.ErrNotFound) {
			t.Errorf("%s of an unknown id: %v, want ErrNotFound", name, err)
		}
	}
}

func testList(t *testing.T, st session.Store) {
	ctx := t.Context()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"a", "b", "c", "d", "e"} {
		dir := "/one"
		if i%2 == 1 {
			dir = "/two"
		}
		mustCreate(t, st, &session.Session{ID: id, WorkDir: dir, Preview: "first " + id, CreatedAt: t0, UpdatedAt: t0.Add(time.Duration(i) * time.Minute)})
	}
	// Touching "a" makes it the newest.
	a, _ := st.Get(ctx, "a")
	a.UpdatedAt = t0.Add(time.Hour)
	if err := st.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	all, next, err := st.List(ctx, session.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "e", "d", "c", "b"}, ids(all)); diff != "" || next != "" {
		t.Errorf("List newest first (-want +got):\n%s next %q", diff, next)
	}
	if len(all) > 0 && all[0].Preview != "first a" {
		t.Errorf("preview %q, want %q", all[0].Preview, "first a")
	}
	var paged []string
	cursor, pages := "", 0
	for {
		page, next, err := st.List(ctx, session.ListOptions{Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(page) > 2 {
			t.Fatalf("page of %d with limit 2", len(page))
		}
		paged = append(paged, ids(page)...)
		if next == "" || pages > 5 {
			break
		}
		cursor = next
	}
	if diff := cmp.Diff(ids(all), paged); diff != "" || pages != 3 {
		t.Errorf("paging by 2 over %d pages (-all +paged):\n%s", pages, diff)
	}
	two, _, err := st.List(ctx, session.ListOptions{WorkDir: "/two"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"d", "b"}, ids(two)); diff != "" {
		t.Errorf("List of /two (-want +got):\n%s", diff)
	}
	none, next, err := st.List(ctx, session.ListOptions{WorkDir: "/nowhere"})
	if err != nil || len(none) != 0 || next != "" {
		t.Errorf("List of an unknown dir: %v %q %v", ids(none), next, err)
	}
}

func testAppend(t *testing.T, st session.Store) {
	ctx := t.Context()
	mustCreate(t, st, &session.Session{ID: "s"})
	if last, err := st.Append(ctx, "s"); err != nil || last != 0 {
		t.Errorf("Append of nothing to an empty log: %d, %v; want 0", last, err)
	}
	var want []session.Entry
	for i, batch := range [][]session.Entry{{userEntry("one")}, {userEntry("two"), userEntry("three")}, {userEntry("four")}} {
		last, err := st.Append(ctx, "s", batch...)
		if err != nil {
			t.Fatal(err)
		}
		if wantLast := int64(len(want) + len(batch)); last != wantLast {
			t.Errorf("batch %d: last seq %d, want %d", i, last, wantLast)
		}
		for j := range batch {
			batch[j].Seq = int64(len(want) + 1)
			want = append(want, batch[j])
		}
	}
	got := readAll(t, st, "s", 0)
	for i := range got {
		if got[i].Time.IsZero() {
			t.Errorf("entry %d: Append left Time zero", got[i].Seq)
		}
		got[i].Time = time.Time{}
	}
	if diff := cmp.Diff(want, got, Opts); diff != "" {
		t.Errorf("Entries (-want +got):\n%s", diff)
	}
	after := readAll(t, st, "s", 2)
	if len(after) != 2 || after[0].Seq != 3 || after[1].Seq != 4 {
		t.Errorf("Entries after 2: seqs %v, want [3 4]", seqs(after))
	}
	if last, err := st.Append(ctx, "s"); err != nil || last != 4 {
		t.Errorf("Append of nothing: %d, %v; want 4", last, err)
	}
	// Stopping the iteration early is fine.
	for range st.Entries(ctx, "s", 0) {
		break
	}
}

func testDelete(t *testing.T, st session.Store) {
	ctx := t.Context()
	mustCreate(t, st, &session.Session{ID: "gone"})
	mustCreate(t, st, &session.Session{ID: "kept"})
	mustAppend(t, st, "gone", userEntry("x"))
	if err := st.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, "gone"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Get after Delete: %v, want ErrNotFound", err)
	}
	if err := firstErr(ctx, st, "gone"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Entries after Delete: %v, want ErrNotFound", err)
	}
	if err := st.Delete(ctx, "gone"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("second Delete: %v, want ErrNotFound", err)
	}
	list, _, _ := st.List(ctx, session.ListOptions{})
	if diff := cmp.Diff([]string{"kept"}, ids(list)); diff != "" {
		t.Errorf("List after Delete (-want +got):\n%s", diff)
	}
	// The id can be used again.
	mustCreate(t, st, &session.Session{ID: "gone"})
	if n := len(readAll(t, st, "gone", 0)); n != 0 {
		t.Errorf("a new session under a deleted id has %d entries", n)
	}
}

func testRewrite(t *testing.T, st session.Store) {
	ctx := t.Context()
	mustCreate(t, st, &session.Session{ID: "s"})
	mustAppend(t, st, "s", userEntry("a"), userEntry("b"), userEntry("c"))
	repl := []session.Entry{userEntry("summary"), userEntry("d")}
	if err := st.Rewrite(ctx, "s", repl); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, st, "s", 0)
	if texts(got) != "summary|d" {
		t.Errorf("after Rewrite: %q, want %q", texts(got), "summary|d")
	}
	if diff := cmp.Diff([]int64{4, 5}, seqs(got)); diff != "" {
		t.Errorf("rewritten seqs (-want +got):\n%s", diff)
	}
	if last := mustAppend(t, st, "s", userEntry("e")); last != 6 {
		t.Errorf("Append after Rewrite: seq %d, want 6", last)
	}
	if err := st.Rewrite(ctx, "s", nil); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, st, "s", 0); len(got) != 0 {
		t.Errorf("after clearing: %d entries", len(got))
	}
	if last := mustAppend(t, st, "s", userEntry("f")); last != 7 {
		t.Errorf("Append after clearing: seq %d, want 7 (seqs are never reused)", last)
	}
	if err := st.Rewrite(ctx, "s", []session.Entry{{Kind: session.KindRun}}); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("Rewrite with a bad entry: %v, want ErrInvalid", err)
	}
	if texts(readAll(t, st, "s", 0)) != "f" {
		t.Errorf("a failed Rewrite changed the log")
	}
}

func testUpdate(t *testing.T, st session.Store) {
	ctx := t.Context()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	mustCreate(t, st, &session.Session{ID: "s", CreatedAt: t0, UpdatedAt: t0})
	s, _ := st.Get(ctx, "s")
	s.Title, s.Preview, s.Model, s.Runs, s.CostUSD = "title", "preview", "m", 3, 1.25
	s.PermissionMode = "accept-edits"
	s.Usage.CacheReadTokens = 7
	s.UpdatedAt = t0.Add(time.Hour)
	s.CreatedAt = t0.Add(time.Minute) // ignored
	if err := st.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	got, _ := st.Get(ctx, "s")
	want := *s
	want.CreatedAt = t0
	if diff := cmp.Diff(&want, got, Opts); diff != "" {
		t.Errorf("after Update (-want +got):\n%s", diff)
	}
	got.UpdatedAt = time.Time{}
	before := time.Now().Add(-time.Second)
	if err := st.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if again, _ := st.Get(ctx, "s"); again.UpdatedAt.Before(before) {
		t.Errorf("Update with a zero UpdatedAt stored %v, want now", again.UpdatedAt)
	}
}

func mustCreate(t *testing.T, st session.Store, s *session.Session) {
	t.Helper()
	ctx := t.Context()
	if err := st.Create(ctx, s); err != nil {
		t.Fatalf("Create %q: %v", s.ID, err)
	}
}

func mustAppend(t *testing.T, st session.Store, id string, e ...session.Entry) int64 {
	t.Helper()
	ctx := t.Context()
	last, err := st.Append(ctx, id, e...)
	if err != nil {
		t.Fatalf("Append to %s: %v", id, err)
	}
	return last
}

func appendErr(ctx context.Context, st session.Store, id string, e ...session.Entry) error {
	_, err := st.Append(ctx, id, e...)
	return err
}

// readAll returns the stored entries after seq (damage reports excluded).
func readAll(t *testing.T, st session.Store, id string, after int64) []session.Entry {
	t.Helper()
	ctx := t.Context()
	var out []session.Entry
	for e, err := range st.Entries(ctx, id, after) {
		if err != nil {
			t.Fatalf("Entries of %s: %v", id, err)
		}
		if e.Seq != 0 {
			out = append(out, e)
		}
	}
	return out
}

func firstErr(ctx context.Context, st session.Store, id string) error {
	for _, err := range st.Entries(ctx, id, 0) {
		if err != nil {
			return err
		}
	}
	return nil
}

func ids(list []*session.Session) []string {
	out := []string{}
	for _, s := range list {
		out = append(out, s.ID)
	}
	return out
}

func seqs(entries []session.Entry) []int64 {
	out := []int64{}
	for _, e := range entries {
		out = append(out, e.Seq)
	}
	return out
}
