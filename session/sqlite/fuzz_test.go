package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
)

// FuzzEntriesRoundTrip: an entry of any text reads back as it was stored;
// and whatever bytes a row of the log holds instead of its entry, reading
// never fails: the other entries come back in order, the row either as the
// entry of its seq or as a heal entry (Seq 0) reporting it, and the session
// loads and takes the next append.
func FuzzEntriesRoundTrip(f *testing.F) {
	f.Add("hello", []byte(`{"seq":2,"time":"2026-01-01T00:00:00Z","kind":"message","message":{"role":"user","content":[{"type":"text","text":"x"}]}}`))
	f.Add("héllo\n<b>&", []byte(`{"seq":2,"time":"2026-01-01T00:00:00Z","ki`))
	f.Add("", []byte("\x00\x00\x00\x00"))
	f.Add("x", []byte(`{"seq":2,"kind":"focus","focus":{}}`))
	f.Add("y", []byte(`{"seq":2,"kind":"heal","heal":{"report":{}}}`))
	f.Add("z", []byte(`null`))
	st, err := Open(filepath.Join(f.TempDir(), "fuzz.db"), Options{Sync: SyncNormal})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	ctx := context.Background()
	n := 0
	f.Fuzz(func(t *testing.T, text string, junk []byte) {
		n++
		id := fmt.Sprint("f", n)
		if err := st.Create(ctx, &session.Session{ID: id}); err != nil {
			t.Fatal(err)
		}
		m1, m2, m3 := llm.UserText("m1"), llm.UserText(text), llm.UserText("m3")
		entries := []session.Entry{{Kind: session.KindMessage, Message: &m1}, {Kind: session.KindMessage, Message: &m2}, {Kind: session.KindMessage, Message: &m3}}
		if _, err := st.Append(ctx, id, entries...); err != nil {
			t.Fatal(err)
		}
		var got []session.Entry
		for e, err := range st.Entries(ctx, id, 1) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, e)
		}
		if len(got) != 2 || got[0].Seq != 2 || utf8.ValidString(text) && got[0].Message.TextOf() != text {
			t.Fatalf("read back %+v, want entry 2 holding %q", got, text)
		}
		if _, err := st.db.ExecContext(ctx, `UPDATE entries SET data = ? WHERE session_id = ? AND seq = 2`, string(junk), id); err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for e, err := range st.Entries(ctx, id, 0) {
			if err != nil {
				t.Fatalf("Entries of a damaged log: %v", err)
			}
			if e.Seq == 0 && (e.Kind != session.KindHeal || len(e.Heal.Report.Damaged) != 1 || e.Heal.Report.Damaged[0].Line != 2) {
				t.Fatalf("unstored entry %+v, want a heal entry reporting row 2", e)
			}
			seqs = append(seqs, e.Seq)
		}
		if len(seqs) != 3 || seqs[0] != 1 || seqs[1] != 2 && seqs[1] != 0 || seqs[2] != 3 {
			t.Fatalf("seqs %v, want 1, then 2 or a damage report, then 3", seqs)
		}
		if _, err := session.Load(ctx, st, id); err != nil {
			t.Fatalf("Load: %v", err)
		}
		if last, err := st.Append(ctx, id, entries[0]); err != nil || last != 4 {
			t.Fatalf("Append after damage: %d, %v; want 4", last, err)
		}
	})
}

// FuzzCallerRules: a caller rule kept under any caller id reads back
// exactly to that caller in that directory and to no other caller: ids
// are parameters, never SQL.
func FuzzCallerRules(f *testing.F) {
	f.Add("alice", "bash(git status)")
	f.Add("o'brien\"; DROP TABLE caller_rules; --", "edit_file(src/**)")
	f.Add("%", "bash(ls:*)")
	f.Add("_", "bash(ls:*)")
	f.Add("ü 日本", "read_file(ü/*)")
	st, err := Open(filepath.Join(f.TempDir(), "fuzz.db"), Options{Sync: SyncNormal})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	ctx := context.Background()
	n := 0
	f.Fuzz(func(t *testing.T, caller, rule string) {
		n++
		dir := fmt.Sprint("/fuzz/", n)
		r := &session.CallerRule{Caller: caller, Dir: dir, Action: "allow", Rule: rule}
		if err := st.AddCallerRule(ctx, r); err != nil {
			if !errors.Is(err, session.ErrInvalid) {
				t.Fatalf("AddCallerRule(%q, %q): %v, want nil or ErrInvalid", caller, rule, err)
			}
			if got, err := st.ListCallerRules(ctx, caller, dir); session.CheckCallerDir(caller, dir) == nil && (err != nil || len(got) != 0) {
				t.Fatalf("a refused rule was stored: %+v", got)
			}
			return
		}
		got, err := st.ListCallerRules(ctx, caller, dir)
		if err != nil || len(got) != 1 || got[0].Caller != caller || got[0].Rule != r.Rule {
			t.Fatalf("rules of %q: %+v, %v; want the one kept (%q)", caller, got, err, r.Rule)
		}
		if other, err := st.ListCallerRules(ctx, caller+"x", dir); err != nil || len(other) != 0 {
			t.Fatalf("another caller (%q) got %+v, %v", caller+"x", other, err)
		}
	})
}
