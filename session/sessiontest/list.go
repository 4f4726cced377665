package sessiontest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/session"
)

// testListFilters: List keeps only the sessions of a caller and a
// workspace, alone, together and with a directory, across pages, and sees
// an Update that moves a session.
func testListFilters(t *testing.T, st session.Store) {
	ctx := t.Context()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, s := range []struct{ id, caller, workspace, dir string }{
		{"a", "alice", "w1", "/one"},
		{"b", "alice", "w2", "/one"},
		{"c", "bob", "w1", "/two"},
		{"d", "alice", "w1", "/two"},
		{"e", "", "", "/one"}, // a CLI session
		{"f", "alice", "w1", "/one"},
	} {
		mustCreate(t, st, &session.Session{ID: s.id, Caller: s.caller, Workspace: s.workspace, WorkDir: s.dir,
			CreatedAt: t0, UpdatedAt: t0.Add(time.Duration(i) * time.Minute)})
	}
	tests := []struct {
		name string
		opts session.ListOptions
		want []string
	}{
		{"caller", session.ListOptions{Caller: "alice"}, []string{"f", "d", "b", "a"}},
		{"workspace", session.ListOptions{Workspace: "w1"}, []string{"f", "d", "c", "a"}},
		{"caller and workspace", session.ListOptions{Caller: "alice", Workspace: "w1"}, []string{"f", "d", "a"}},
		{"and directory", session.ListOptions{Caller: "alice", Workspace: "w1", WorkDir: "/one"}, []string{"f", "a"}},
		{"unknown caller", session.ListOptions{Caller: "carol"}, []string{}},
		{"caller compared exactly", session.ListOptions{Caller: "Alice"}, []string{}},
		{"no filter", session.ListOptions{}, []string{"f", "e", "d", "c", "b", "a"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, listAll(t, st, tt.opts, 0)); diff != "" {
			t.Errorf("List %s (-want +got):\n%s", tt.name, diff)
		}
		if diff := cmp.Diff(tt.want, listAll(t, st, tt.opts, 2)); diff != "" {
			t.Errorf("List %s by pages of 2 (-want +got):\n%s", tt.name, diff)
		}
	}
	first, _, err := st.List(ctx, session.ListOptions{Caller: "alice", Limit: 1})
	if err != nil || len(first) != 1 || first[0].Caller != "alice" || first[0].Workspace != "w1" {
		t.Errorf("listed session %+v, %v; want f of alice in w1", first, err)
	}
	// Moving a session to another workspace moves it in the listings.
	a, err := st.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	a.Workspace, a.UpdatedAt = "w2", t0.Add(time.Hour)
	if err := st.Update(ctx, a); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, listAll(t, st, session.ListOptions{Workspace: "w2"}, 0)); diff != "" {
		t.Errorf("List of w2 after Update (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"f", "d", "c"}, listAll(t, st, session.ListOptions{Workspace: "w1"}, 0)); diff != "" {
		t.Errorf("List of w1 after Update (-want +got):\n%s", diff)
	}
}

// listAll lists every session opts selects, by pages of limit (0: one
// call), and returns their ids.
func listAll(t *testing.T, st session.Store, opts session.ListOptions, limit int) []string {
	t.Helper()
	ctx := t.Context()
	opts.Limit = limit
	out := []string{}
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatalf("List %+v: more than 10 pages", opts)
		}
		page, next, err := st.List(ctx, opts)
		if err != nil {
			t.Fatalf("List %+v: %v", opts, err)
		}
		if limit > 0 && len(page) > limit {
			t.Fatalf("List %+v: page of %d", opts, len(page))
		}
		out = append(out, ids(page)...)
		if next == "" {
			return out
		}
		opts.Cursor = next
	}
}
