package jsonl_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"

	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/jsonl"
	"github.com/reinhq/rein/session/sessiontest"
)

func newStore(t *testing.T) *jsonl.Store {
	t.Helper()
	s, err := jsonl.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) session.Store { return newStore(t) })
}

var ctx = context.Background()

func userEntry(text string) session.Entry {
	m := llm.UserText(text)
	return session.Entry{Kind: session.KindMessage, Message: &m}
}

// logWith creates session "s" holding n user messages, closes the store,
// and returns the directory.
func logWith(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	st, err := jsonl.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := st.Append(ctx, "s", userEntry(fmt.Sprint("m", i+1))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func texts(msgs []llm.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.TextOf())
	}
	return strings.Join(out, " ")
}

// SESS-1, SESS-2: a damaged log loads; the damage is reported, never fatal,
// and the next writer cuts a damaged tail off before appending.
func TestDamagedLog(t *testing.T) {
	tests := []struct {
		name   string
		damage func(log []byte) []byte
		want   string // the messages loaded
		reason string
		line   int64
		kept   bool // the damaged line is whole: it stays in the file
	}{
		{"torn last line", func(b []byte) []byte { return append(b, `{"seq":4,"time":"2026-01-01T00:00:00Z","ki`...) }, "m1 m2 m3", "torn last line", 4, false},
		{"NUL-padded tail", func(b []byte) []byte { return append(b, make([]byte, 4096)...) }, "m1 m2 m3", "torn last line (NUL bytes)", 4, false},
		{"torn line padded with NULs", func(b []byte) []byte { return append(append(b, `{"seq":4,"ti`...), make([]byte, 100)...) }, "m1 m2 m3", "torn last line", 4, false},
		{"corrupt complete last line", func(b []byte) []byte { return append(b, "not json\n"...) }, "m1 m2 m3", "corrupt: ", 4, true},
		{"corrupt middle line", func(b []byte) []byte {
			lines := bytes.SplitAfter(b, []byte("\n"))
			return bytes.Join([][]byte{lines[0], []byte("{\"seq\":2,\"kind\":\"message\"}\n"), lines[1], lines[2]}, nil)
		}, "m1 m2 m3", "corrupt: ", 2, true},
		{"repeated line", func(b []byte) []byte {
			lines := bytes.SplitAfter(b, []byte("\n"))
			return bytes.Join([][]byte{lines[0], lines[1], lines[1], lines[2]}, nil)
		}, "m1 m2 m3", "corrupt: seq 2 does not follow 2", 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := logWith(t, 3)
			path := filepath.Join(dir, "s.jsonl")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tt.damage(b), 0o600); err != nil {
				t.Fatal(err)
			}
			st, err := jsonl.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			state, err := session.Load(ctx, st, "s")
			if err != nil {
				t.Fatalf("Load of a damaged log: %v", err)
			}
			if got := texts(state.Messages); got != tt.want {
				t.Errorf("messages %q, want %q", got, tt.want)
			}
			d := state.Heal.Damaged
			if len(d) != 1 || !strings.HasPrefix(d[0].Reason, tt.reason) || d[0].Line != tt.line {
				t.Fatalf("damage %+v, want one at line %d, reason %q…", d, tt.line, tt.reason)
			}
			last, err := st.Append(ctx, "s", userEntry("m4"))
			if err != nil || last != 4 {
				t.Fatalf("Append after damage: seq %d, %v; want 4", last, err)
			}
			again, err := session.Load(ctx, st, "s")
			if err != nil {
				t.Fatal(err)
			}
			if got := texts(again.Messages); got != tt.want+" m4" {
				t.Errorf("after append: %q, want %q", got, tt.want+" m4")
			}
			switch {
			case !tt.kept && len(again.Heal.Damaged) != 0:
				t.Errorf("the torn tail was not cut before appending: %+v", again.Heal.Damaged)
			case tt.kept && (len(again.Heal.Damaged) != 1 || again.Heal.Damaged[0].Line != tt.line):
				// SESS-1: a whole line that cannot be read is never written over.
				t.Errorf("the damaged line %d was not kept: %+v", tt.line, again.Heal.Damaged)
			}
		})
	}
}

// SESS-1: a second process writing a session gets ErrLocked naming the
// first; flock is per open file, so a second store in this process stands
// in for it.
func TestLock(t *testing.T) {
	dir := logWith(t, 1)
	a, _ := jsonl.New(dir)
	b, _ := jsonl.New(dir)
	defer a.Close()
	defer b.Close()
	if err := a.Acquire("s"); err != nil {
		t.Fatal(err)
	}
	_, err := b.Append(ctx, "s", userEntry("x"))
	if !errors.Is(err, session.ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("process %d", os.Getpid())) {
		t.Fatalf("Append while another store holds the session: %v; want ErrLocked naming pid %d", err, os.Getpid())
	}
	for name, err := range map[string]error{"Update": b.Update(ctx, &session.Session{ID: "s"}), "Delete": b.Delete(ctx, "s"),
		"Rewrite": b.Rewrite(ctx, "s", nil), "Acquire": b.Acquire("s")} {
		if !errors.Is(err, session.ErrLocked) {
			t.Errorf("%s while locked: %v, want ErrLocked", name, err)
		}
	}
	// Reading and forking need no lock.
	if _, err := session.Load(ctx, b, "s"); err != nil {
		t.Errorf("Load while locked: %v", err)
	}
	if _, err := b.Fork(ctx, "s", 0); err != nil {
		t.Errorf("Fork while locked: %v", err)
	}
	if _, err := a.Append(ctx, "s", userEntry("mine")); err != nil {
		t.Fatal(err)
	}
	if err := a.Release("s"); err != nil {
		t.Fatal(err)
	}
	if last, err := b.Append(ctx, "s", userEntry("yours")); err != nil || last != 3 {
		t.Errorf("Append after Release: %d, %v; want 3", last, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(ctx, "s", userEntry("x")); !errors.Is(err, jsonl.ErrClosed) {
		t.Errorf("Append after Close: %v, want ErrClosed", err)
	}
}

// The files are as the package documentation says.
func TestLayout(t *testing.T) {
	dir := logWith(t, 2)
	names := map[string]bool{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names[e.Name()] = true
	}
	if diff := cmp.Diff(map[string]bool{"s.jsonl": true, "s.meta.json": true, "s.lock": true}, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "s.jsonl"))
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"seq":1,"time":"`) || !strings.Contains(lines[0], `"kind":"message","message":{"role":"user","content":[{"type":"text","text":"m1"}]}}`) {
		t.Errorf("log:\n%s", b)
	}
}

// A corrupt line in the middle stays in the file; once a resume stored the
// report (RecordHeal), later loads do not report it again.
func TestDamageReportedOnce(t *testing.T) {
	dir := logWith(t, 3)
	path := filepath.Join(dir, "s.jsonl")
	b, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(b, []byte("\n"))
	if err := os.WriteFile(path, bytes.Join([][]byte{lines[0], []byte("junk\n"), lines[1], lines[2]}, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	st := newStoreAt(t, dir)
	first, err := session.Load(ctx, st, "s")
	if err != nil || len(first.Heal.Damaged) != 1 {
		t.Fatalf("first load: %v, damage %+v", err, first.Heal.Damaged)
	}
	if err := session.SaveHeal(ctx, st, "s", first); err != nil {
		t.Fatal(err)
	}
	again, err := session.Load(ctx, st, "s")
	if err != nil || !again.Heal.Empty() || texts(again.Messages) != "m1 m2 m3" {
		t.Errorf("after RecordHeal: %v, report %q, messages %q", err, again.Heal.String(), texts(again.Messages))
	}
}

func newStoreAt(t *testing.T, dir string) *jsonl.Store {
	t.Helper()
	s, err := jsonl.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
