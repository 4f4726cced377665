package checkpoint

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	noErr(t, err)
	return s
}

func begin(t *testing.T, s *Store, prompt string, mark int64) int {
	t.Helper()
	seq, err := s.Begin(prompt, mark, t0)
	noErr(t, err)
	return seq
}

func restore(t *testing.T, s *Store, seq int) Changes {
	t.Helper()
	ch, err := s.Restore(seq)
	noErr(t, err)
	return ch
}

// CLI-6: each prompt's changes are saved before the first change to each
// file; restoring to a prompt puts back every file changed from it on as
// it was before it, removes the files created since, and says what it
// cannot undo; the store survives reopening (a resume).
func TestCheckpointRestore_CLI6(t *testing.T) {
	ws, dir := t.TempDir(), t.TempDir()
	a, b, c := filepath.Join(ws, "a.go"), filepath.Join(ws, "b.go"), filepath.Join(ws, "sub", "c.go")
	write(t, a, "a0")
	write(t, b, "b0")
	s := open(t, dir)
	if seq := begin(t, s, "first", 4); seq != 1 {
		t.Fatalf("first seq %d", seq)
	}
	noErr(t, s.Track(a))
	write(t, a, "a1")
	noErr(t, s.Track(a)) // a second change in the prompt keeps the first content
	write(t, a, "a1b")
	begin(t, s, "second", 9)
	noErr(t, s.Track(b))
	write(t, b, "b2")
	noErr(t, s.Track(c)) // created by the prompt
	write(t, c, "c2")
	noErr(t, s.Track(a))
	write(t, a, "a2")
	noErr(t, s.NoteShell("go generate ./..."))

	s = open(t, dir) // as after a resume
	pts := s.Points()
	if len(pts) != 2 || pts[0].Prompt != "first" || pts[1].Mark != 9 || len(pts[1].Files) != 3 || !slices.Equal(pts[1].Shell, []string{"go generate ./..."}) {
		t.Fatalf("points = %+v", pts)
	}
	ch := restore(t, s, 2)
	if read(t, a) != "a1b" || read(t, b) != "b0" || !strings.Contains(read(t, c), "no such file") {
		t.Errorf("after restoring 2: a=%q b=%q c=%q", read(t, a), read(t, b), read(t, c))
	}
	if len(ch.Restored) != 2 || !slices.Equal(ch.Removed, []string{c}) || len(ch.Shell) != 1 {
		t.Errorf("changes = %+v", ch)
	}
	write(t, a, "a3")
	restore(t, s, 1)
	if read(t, a) != "a0" {
		t.Errorf("after restoring 1: a=%q", read(t, a))
	}
	if _, err := s.Restore(7); err == nil || !strings.Contains(err.Error(), "no checkpoint 7") {
		t.Errorf("restore 7: %v", err)
	}
}

// Attack rows: a damaged saved content restores nothing; a torn index line
// (a crash while writing) is dropped; a file over the limit or not regular
// is listed as not restorable; a link is followed to the file it changes.
func TestCheckpointDamage_CLI6(t *testing.T) {
	ws, dir := t.TempDir(), t.TempDir()
	a, b := filepath.Join(ws, "a"), filepath.Join(ws, "b")
	write(t, a, "a0")
	write(t, b, "b0")
	s := open(t, dir)
	begin(t, s, "p", 0)
	noErr(t, s.Track(a))
	noErr(t, s.Track(b))
	write(t, a, "a1")
	write(t, b, "b1")
	blob := s.Points()[0].Files[1].Blob
	write(t, filepath.Join(dir, "blobs", blob), "tampered")
	if _, err := s.Restore(1); err == nil || !strings.Contains(err.Error(), "damaged: nothing was restored") {
		t.Errorf("restore with a damaged blob: %v", err)
	}
	if read(t, a) != "a1" {
		t.Errorf("a damaged store changed a file: %q", read(t, a))
	}

	f, err := os.OpenFile(filepath.Join(dir, "index.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"kind":"begin","seq":2,"point":{"seq":2,"pro`)
	f.Close()
	if pts := open(t, dir).Points(); len(pts) != 1 {
		t.Errorf("a torn line: %+v", pts)
	}

	d2 := t.TempDir()
	s2 := open(t, d2)
	begin(t, s2, "p", 0)
	noErr(t, s2.Track(ws)) // a directory
	link := filepath.Join(ws, "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	noErr(t, s2.Track(link))
	pts := s2.Points()
	if len(pts[0].Files) != 2 || pts[0].Files[0].Untracked == "" || pts[0].Files[1].Path != a {
		t.Errorf("files = %+v", pts[0].Files)
	}
}

// CopyTo keeps the checkpoints before a prompt in a new store (a rewound
// conversation's session), their contents with them.
func TestCheckpointCopyTo_CLI6(t *testing.T) {
	ws, dir := t.TempDir(), t.TempDir()
	a := filepath.Join(ws, "a")
	write(t, a, "a0")
	s := open(t, dir)
	begin(t, s, "one", 1)
	noErr(t, s.Track(a))
	write(t, a, "a1")
	noErr(t, s.NoteShell("make"))
	begin(t, s, "two", 2)
	noErr(t, s.Track(a))
	write(t, a, "a2")
	c, err := s.CopyTo(t.TempDir(), 2)
	noErr(t, err)
	pts := c.Points()
	if len(pts) != 1 || pts[0].Prompt != "one" || len(pts[0].Files) != 1 || len(pts[0].Shell) != 1 {
		t.Fatalf("copied = %+v", pts)
	}
	restore(t, c, 1)
	if read(t, a) != "a0" {
		t.Errorf("a = %q", read(t, a))
	}
}
