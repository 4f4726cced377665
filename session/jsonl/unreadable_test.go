package jsonl_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/session"
)

// SESS-1, SESS-2: a log of which no line can be read is refused, by name,
// and kept byte for byte — neither Load nor the next Append writes over
// it — while a log whose only damage is a torn write (a crash during the
// first append) still opens.
func TestUnreadableLogKept_SESS1(t *testing.T) {
	tests := []struct {
		name    string
		log     string
		refused bool
	}{
		{"every line garbage", "garbage line one\ngarbage two\n", true},
		{"one garbage line", "not json\n", true},
		{"garbage with blank lines and NUL padding", "\n{\"seq\":\n\n" + string(make([]byte, 64)), true},
		{"a line with no seq", `{"kind":"message"}` + "\n", true},
		{"a negative seq", `{"seq":-1,"time":"2026-01-01T00:00:00Z","kind":"focus","focus":{}}` + "\n", true},
		{"only a torn first line", `{"seq":1,"time":"2026-01-01T00:00:00Z","ki`, false},
		{"only NUL padding", string(make([]byte, 4096)), false},
		{"empty", "", false},
		{"blank lines", "\n\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := logWith(t, 0)
			path := filepath.Join(dir, "s.jsonl")
			if err := os.WriteFile(path, []byte(tt.log), 0o600); err != nil {
				t.Fatal(err)
			}
			st := newStoreAt(t, dir)
			_, loadErr := session.Load(ctx, st, "s")
			_, appendErr := st.Append(ctx, "s", userEntry("new"))
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.refused {
				if loadErr != nil || appendErr != nil {
					t.Fatalf("Load: %v; Append: %v", loadErr, appendErr)
				}
				return
			}
			for what, err := range map[string]error{"Load": loadErr, "Append": appendErr} {
				if !errors.Is(err, session.ErrUnreadable) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "kept") {
					t.Errorf("%s: %v; want ErrUnreadable naming %s", what, err, path)
				}
			}
			if !bytes.Equal(after, []byte(tt.log)) {
				t.Errorf("the unreadable log was changed:\n%q\nwant\n%q", after, tt.log)
			}
		})
	}
}

// SESS-1: a whole damaged line in a readable log is kept, not cut, when
// the session is written again; one readable line is enough.
func TestDamagedLinesKeptOnAppend_SESS1(t *testing.T) {
	dir := logWith(t, 1)
	path := filepath.Join(dir, "s.jsonl")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damaged := append(append([]byte(nil), good...), "garbage one\ngarbage two\n"...)
	if err := os.WriteFile(path, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	st := newStoreAt(t, dir)
	if last, err := st.Append(ctx, "s", userEntry("m2")); err != nil || last != 2 {
		t.Fatalf("Append: seq %d, %v", last, err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(after, damaged) {
		t.Errorf("the damaged lines were written over:\n%s", after)
	}
	state, err := session.Load(ctx, st, "s")
	if err != nil || texts(state.Messages) != "m1 m2" || len(state.Heal.Damaged) != 2 {
		t.Errorf("Load: %v, messages %q, damage %+v", err, texts(state.Messages), state.Heal.Damaged)
	}
}
