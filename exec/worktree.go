package exec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// worktreeAdmin are the entries of a linked worktree's administrative
// directory (.git/worktrees/NAME) kept read-only: what git reads as that
// worktree's configuration and where it points.
var worktreeAdmin = []string{"config.worktree", "commondir", "gitdir"}

// linkedWorktree lets git commit work when the workspace is a linked
// worktree (git worktree add) whose repository lies outside the writable
// directories (SPEC TOOL-7): the repository's git directory is bound
// writable — objects, refs, logs, the worktree's own index and HEAD —
// while its [GitProtected] entries stay read-only (config and hooks,
// which would run code on the host), and so do the worktree's own
// config.worktree, commondir and gitdir. A missing one gets a placeholder,
// so it cannot be created. Anything else than a well-formed linked
// worktree is left as it is (read-only).
func (sh *shield) linkedWorktree(ws string) error {
	dotgit := filepath.Join(ws, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	admin, ok := gitdirOf(dotgit)
	if !ok {
		return nil
	}
	if admin, err = filepath.EvalSymlinks(admin); err != nil {
		return nil
	}
	common, ok := commondirOf(admin)
	if !ok {
		return nil
	}
	if common, err = filepath.EvalSymlinks(common); err != nil {
		return nil
	}
	worktrees := filepath.Join(common, "worktrees")
	if withinAny(sh.writable, common) || admin == worktrees || !within(worktrees, admin) {
		return nil // protected by the shield already, or not a linked worktree's layout
	}
	if fi, err := os.Stat(common); err != nil || !fi.IsDir() {
		return nil
	}
	sh.args = append(sh.args, "--bind", common, common)
	sh.mounts++
	if err := sh.keep(common, GitProtected); err != nil {
		return err
	}
	sh.args = append(sh.args, "--bind", admin, admin)
	sh.mounts++
	return sh.keep(admin, worktreeAdmin)
}

// keep makes names of git directory g read-only, with a placeholder for a
// missing one.
func (sh *shield) keep(g string, names []string) error {
	for _, name := range names {
		p := filepath.Join(g, name)
		_, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			kind, ok := gitPlaceholder[name]
			if !ok {
				kind = placeholderKind{file: true}
			}
			if err := sh.placeholder(p, kind); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("cannot protect %s: %w", p, err)
		default:
			sh.bound[p] = false // bind again: the writable bind above covers the shield's
			sh.ro(p)
		}
	}
	return nil
}
