package runner

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/exec"
)

// fakeFiles is an editor holding buffers; err, when set, fails each call.
type fakeFiles struct {
	buffers map[string]string
	calls   []string
	err     error
}

func (f *fakeFiles) ReadTextFile(_ context.Context, path string) (string, bool, error) {
	f.calls = append(f.calls, "read "+path)
	if f.err != nil {
		return "", false, f.err
	}
	b, ok := f.buffers[path]
	return b, ok, nil
}

func (f *fakeFiles) WriteTextFile(_ context.Context, path, text string) error {
	f.calls = append(f.calls, "write "+path)
	if f.err != nil {
		return f.err
	}
	f.buffers[path] = text
	return nil
}

// The file hook (FRONT-1): a text file in the workspace is read from the
// holder, an image, a binary file or a file outside from disk without
// asking it; a holder that fails leaves the disk's content; a write goes
// to disk, then to the holder, and a write the backend refuses never
// reaches it.
func TestHeldFiles_FRONT1(t *testing.T) {
	dir := t.TempDir()
	root, outside := filepath.Join(dir, "ws"), filepath.Join(dir, "out")
	os.MkdirAll(root, 0o700)
	os.MkdirAll(outside, 0o700)
	write := func(p, s string) string {
		os.WriteFile(p, []byte(s), 0o600)
		return p
	}
	text := write(filepath.Join(root, "a.txt"), "disk\n")
	png := write(filepath.Join(root, "i.png"), "\x89PNG\r\n\x1a\n....")
	bin := write(filepath.Join(root, "b.bin"), "\xff\xfe\x00bin")
	far := write(filepath.Join(outside, "s.txt"), "outside\n")
	ed := &fakeFiles{buffers: map[string]string{text: "buffer\n", png: "x", bin: "x", far: "buffer outside\n"}}
	b := withFiles(&exec.Local{}, ed, root, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	for path, want := range map[string]string{text: "buffer\n", png: "\x89PNG\r\n\x1a\n....", bin: "\xff\xfe\x00bin", far: "outside\n"} {
		got, err := b.ReadFile(ctx, path)
		if err != nil || string(got) != want {
			t.Errorf("read %s = %q, %v; want %q", filepath.Base(path), got, err, want)
		}
	}
	if len(ed.calls) != 1 || ed.calls[0] != "read "+text {
		t.Errorf("editor calls = %v, want only the text file's", ed.calls)
	}

	ed.calls = nil
	if err := b.WriteFile(ctx, text, []byte("new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if disk, _ := os.ReadFile(text); string(disk) != "new\n" || ed.buffers[text] != "new\n" {
		t.Errorf("after the write: disk %q, buffer %q", disk, ed.buffers[text])
	}
	if err := b.WriteFile(ctx, far, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if len(ed.calls) != 1 {
		t.Errorf("editor calls = %v, want one write in the workspace", ed.calls)
	}

	ed.calls = nil
	sb := withFiles(&exec.Sandbox{Workspace: root, Hide: func(p string) bool { return filepath.Base(p) == "a.txt" }}, ed, root, slog.New(slog.DiscardHandler))
	if _, err := sb.ReadFile(ctx, text); err == nil {
		t.Error("a file the sandbox hides was read")
	}
	if err := sb.WriteFile(ctx, text, []byte("y\n"), 0o600); err == nil {
		t.Error("a file the sandbox hides was written")
	}
	if len(ed.calls) != 0 {
		t.Errorf("the editor was asked %v about a hidden file", ed.calls)
	}

	ed.err = errors.New("editor gone")
	if got, err := b.ReadFile(ctx, text); err != nil || string(got) != "new\n" {
		t.Errorf("failing editor: read %q, %v; want the disk's", got, err)
	}
	if err := b.WriteFile(ctx, text, []byte("again\n"), 0o600); err != nil {
		t.Errorf("failing editor: write %v", err)
	}
	if disk, _ := os.ReadFile(text); string(disk) != "again\n" {
		t.Errorf("failing editor: disk %q", disk)
	}
}
