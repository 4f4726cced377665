package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/fileindex"
)

// CLI-6 attack rows: an @file#lines mention reads only what the model could
// read freely — a sensitive file, a symbolic link out of the workspace, a
// path outside it, a binary, a missing line are refused with the reason;
// a good one is numbered.
func TestExcerpt_CLI6(t *testing.T) {
	te := newTestEnv(t)
	te.script("m")
	te.write("a.go", "one\ntwo\nthree\n")
	te.write(".env", "TOKEN=secret\n")
	te.write("bin.dat", "ab\x00cd\n")
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(te.ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	drive(t, te, func(ctx context.Context, b tui.Backend, opts tui.Options) {
		er, ok := b.(tui.ExcerptReader)
		if !ok {
			t.Fatal("the backend reads no excerpts")
		}
		if opts.Files == nil || opts.Files.Root() != te.ws {
			t.Errorf("the @ picker's index is not the workspace's: %v", opts.Files)
		}
		got, err := er.Excerpt(ctx, "a.go", fileindex.Range{Start: 2, End: 3})
		if err != nil || got != "     2\ttwo\n     3\tthree\n" {
			t.Errorf("a.go#2-3 = %q, %v", got, err)
		}
		got, err = er.Excerpt(ctx, "a.go", fileindex.Range{Start: 3, End: 9})
		if err != nil || !strings.Contains(got, "the excerpt ends at line 3") {
			t.Errorf("a.go#3-9 = %q, %v", got, err)
		}
		for _, tc := range []struct {
			path string
			r    fileindex.Range
			want string
		}{
			{".env", fileindex.Range{Start: 1, End: 1}, "does not let the model read it freely"},
			{"link.txt", fileindex.Range{Start: 1, End: 1}, "outside the workspace"},
			{outside, fileindex.Range{Start: 1, End: 1}, "does not let the model read it freely"},
			{"../../etc/passwd", fileindex.Range{Start: 1, End: 1}, "does not let the model read it freely"},
			{"bin.dat", fileindex.Range{Start: 1, End: 1}, "binary"},
			{"missing.go", fileindex.Range{Start: 1, End: 1}, "no such file"},
			{"a.go", fileindex.Range{Start: 7, End: 8}, "fewer than 7 lines"},
		} {
			if got, err := er.Excerpt(ctx, tc.path, tc.r); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s#%d-%d = %q, %v; want an error with %q", tc.path, tc.r.Start, tc.r.End, got, err, tc.want)
			}
		}
	}, "--model", "scripted/m")
}

// CLI-6 attack rows: a ! command runs through the bash tool after the
// policy: a deny rule refuses it (and nothing runs); an allowed one runs in
// the workspace and its output comes back.
func TestShell_CLI6(t *testing.T) {
	te := newTestEnv(t)
	te.script("m")
	te.write("keep.txt", "kept\n")
	drive(t, te, func(ctx context.Context, b tui.Backend, _ tui.Options) {
		sh := b.(tui.ShellRunner)
		res, err := sh.Shell(ctx, "cat keep.txt")
		if err != nil || res.Failed || !strings.Contains(res.Output, "kept") {
			t.Errorf("cat keep.txt = %+v, %v", res, err)
		}
		if _, err := sh.Shell(ctx, "rm keep.txt"); err == nil || !strings.Contains(err.Error(), "refused by the permission policy") {
			t.Errorf("rm under a deny rule: %v", err)
		}
		if _, err := os.Stat(filepath.Join(te.ws, "keep.txt")); err != nil {
			t.Errorf("the refused rm ran: %v", err)
		}
		res, err = sh.Shell(ctx, "exit 3")
		if err != nil || !res.Failed {
			t.Errorf("exit 3 = %+v, %v", res, err)
		}
	}, "--model", "scripted/m", "--disallowed-tools", "bash(rm:*)")
}
