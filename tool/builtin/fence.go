package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/tool"
)

// Fence bounds the paths the file and search tools reach (read_file,
// write_file, edit_file, multi_edit, list_dir, glob, grep, and bash's dir),
// whatever the permission policy or the caller allows: the check runs in
// the tool, after every approval (SPEC API-9, PERM-2). Paths are judged
// as written and with their symbolic links resolved (those of the deepest
// existing ancestor, for a file to create), so neither .. nor a link in
// the workspace leads out.
//
// The zero value refuses one thing in every mode: a .rein/data directory
// and what lies in it, rein's own data (the history mirror, the knowledge
// base), which rein's writers keep and no tool may read or write. Root
// confines every path to one directory, as a server confines its runs to
// their workspaces; Hidden are files and directories refused even inside
// Root (a server's data directory).
type Fence struct {
	// Root, when set, is the only directory the tools reach: an absolute
	// path without symbolic links (resolved when the run started), so
	// that a link swapped in for it later is refused, not followed.
	Root string
	// Hidden are files and directories no tool reaches.
	Hidden []string
}

// ErrFenced is what a refused path's error wraps.
var ErrFenced = errors.New("refused by rein's fence")

// Check returns why abs (absolute and clean) may not be reached, nil when
// it may.
func (f Fence) Check(abs string) error {
	real, err := exec.ResolveExisting(abs)
	if err != nil {
		return fmt.Errorf("%w: %s cannot be resolved: %v", ErrFenced, abs, err)
	}
	if inReinData(abs) || inReinData(real) {
		return fmt.Errorf("%w: %s is rein's own data (.rein/data: the history mirror and the knowledge base), which no tool reads or writes; "+
			"use kb_search for the knowledge base, or `rein mirror` on the command line", ErrFenced, abs)
	}
	root, rootErr := f.realRoot()
	for _, h := range f.hidden(root) {
		if isWithin(h, real) || isWithin(h, abs) {
			return fmt.Errorf("%w: %s lies in a directory of the server's own (its data, or another root), which no tool reaches", ErrFenced, abs)
		}
	}
	if f.Root == "" {
		return nil
	}
	if rootErr != nil {
		return fmt.Errorf("%w: the workspace %s cannot be resolved: %v", ErrFenced, f.Root, rootErr)
	}
	if root != filepath.Clean(f.Root) {
		// Root is the workspace as the run found it, without links. One
		// that leads elsewhere now was swapped for a link during the run
		// (by a command of another workspace holding it) and would carry
		// the fence to another caller's directory.
		return fmt.Errorf("%w: the workspace %s is now a link to %s, swapped in during the run: no tool reaches it; open the workspace again",
			ErrFenced, f.Root, root)
	}
	if !isWithin(root, real) {
		shown := abs
		if real != abs {
			shown = fmt.Sprintf("%s (a link to %s)", abs, real)
		}
		return fmt.Errorf("%w: %s is outside the workspace %s; on this server a run's tools reach only its workspace, "+
			"whatever is approved: work inside it, or open the other directory as a workspace of its own", ErrFenced, shown, f.Root)
	}
	return nil
}

// realRoot is Root with its links resolved; Root itself, with the error,
// when they cannot be ("" without a Root).
func (f Fence) realRoot() (string, error) {
	if f.Root == "" {
		return "", nil
	}
	r, err := filepath.EvalSymlinks(f.Root)
	if err != nil {
		return f.Root, err
	}
	return r, nil
}

// hidden are the Hidden directories, as given and with links resolved,
// but for those holding root (Root as [Fence.realRoot] resolves it): the
// root a workspace lies in hides the other workspaces it holds, not this
// one.
func (f Fence) hidden(root string) []string {
	var out []string
	for _, h := range f.Hidden {
		hs := []string{filepath.Clean(h)}
		if r, err := filepath.EvalSymlinks(h); err == nil && r != hs[0] {
			hs = append(hs, r)
		}
		for _, p := range hs {
			if f.Root == "" || !isWithin(p, root) {
				out = append(out, p)
			}
		}
	}
	return out
}

// refuse returns the tool error for a path the fence refuses, nil when
// the call may go on.
func (f Fence) refuse(abs string) *tool.Result {
	if err := f.Check(abs); err != nil {
		r := tool.Errorf("%v", err)
		return &r
	}
	return nil
}

// Backend returns b with its file operations checked by the fence; Run
// is b's (commands are the sandbox's to confine).
func (f Fence) Backend(b exec.Backend) exec.Backend { return fencedBackend{b, f} }

// fenced returns b behind fence f, unless b is fenced already.
func fenced(b exec.Backend, f Fence) exec.Backend {
	if _, ok := b.(fencedBackend); ok {
		return b
	}
	return f.Backend(b)
}

// fencedBackend is a Backend whose ReadFile, WriteFile and Stat pass the
// fence first.
type fencedBackend struct {
	exec.Backend
	f Fence
}

// ReadFile implements exec.Backend.
func (fb fencedBackend) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if err := fb.f.Check(filepath.Clean(path)); err != nil {
		return nil, err
	}
	if fb.f.Root != "" {
		return fb.readOpened(ctx, path)
	}
	return fb.Backend.ReadFile(ctx, path)
}

// WriteFile implements exec.Backend.
func (fb fencedBackend) WriteFile(ctx context.Context, path string, data []byte, perm fs.FileMode) error {
	if err := fb.f.Check(filepath.Clean(path)); err != nil {
		return err
	}
	if fb.f.Root != "" {
		// The path as the fence resolved it: the backend's own checks
		// and write then follow no link a command swapped in since.
		if real, err := exec.ResolveExisting(filepath.Clean(path)); err == nil {
			path = real
		}
	}
	return fb.Backend.WriteFile(ctx, path, data, perm)
}

// Stat implements exec.Backend.
func (fb fencedBackend) Stat(ctx context.Context, path string) (fs.FileInfo, error) {
	if err := fb.f.Check(filepath.Clean(path)); err != nil {
		return nil, err
	}
	return fb.Backend.Stat(ctx, path)
}

// inReinData reports a path in a .rein/data directory, or that directory
// (names compared without case: on a case-insensitive file system
// .REIN/Data is the same directory).
func inReinData(p string) bool {
	return strings.Contains("/"+strings.ToLower(filepath.ToSlash(p))+"/", "/.rein/"+exec.ReinData+"/")
}

// isWithin reports whether p is dir or below it; both are clean and
// absolute.
func isWithin(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
