package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/session"
)

// workspaceDir resolves a tool call's workspace argument: "" is the root;
// a relative path is taken from the root; an absolute one must be the root
// or below it. Symbolic links are resolved first, so a link in the root
// pointing elsewhere does not lead out of it.
func (s *Server) workspaceDir(arg string) (string, error) {
	dir := arg
	if dir == "" {
		dir = s.cfg.Root
	} else if !filepath.IsAbs(dir) {
		dir = filepath.Join(s.cfg.Root, dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("workspace %q: %v; give a directory at or below %s", arg, cleanPathErr(err), s.cfg.Root)
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("workspace %q is not a directory; give a directory at or below %s", arg, s.cfg.Root)
	}
	if !s.inRoot(real) {
		return "", fmt.Errorf("workspace %q is outside %s, the directory rein mcp serve was started in: give a directory at or below it (or start the server higher up)", arg, s.cfg.Root)
	}
	return real, nil
}

// inRoot reports whether dir (absolute) is the root or below it, after
// resolving symbolic links in both.
func (s *Server) inRoot(dir string) bool {
	root := s.cfg.Root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	rel, err := filepath.Rel(root, filepath.Clean(dir))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// session returns the metadata of the stored session id, which must be a
// valid id of a session whose workspace is in the root. A session of
// another workspace reads as not found: the client learns nothing of it.
func (s *Server) session(ctx context.Context, id string) (*session.Session, error) {
	if err := session.ValidID(id); err != nil {
		return nil, fmt.Errorf("session_id %q is not a session id: want 1 to 128 of [A-Za-z0-9._-], not starting with '.' (list_sessions gives them)", clipArg(id))
	}
	sess, err := s.cfg.Store.Get(ctx, id)
	if errors.Is(err, session.ErrNotFound) || err == nil && !s.inRoot(sess.WorkDir) {
		return nil, fmt.Errorf("no session %s in %s (list_sessions gives them)", id, s.cfg.Root)
	}
	if err != nil {
		return nil, fmt.Errorf("session %s: %v", id, err)
	}
	return sess, nil
}

// cleanPathErr drops the path from a file error (it is in the message
// already).
func cleanPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// clipArg cuts an argument echoed in an error message.
func clipArg(s string) string { return strings.ToValidUTF8(clip(s, 64), "?") }

// CheckMode checks a tool call's permission mode against the mode the
// workspace's configuration (and the server's flags) set: the call may ask
// for the same or a stricter one (permission.Modes' order), never a looser
// one — the model of the MCP client chooses the arguments, and must not
// lift the user's approvals by asking for bypass.
func CheckMode(configured, asked string) error {
	c, err := permission.ParseMode(configured)
	if err != nil {
		return fmt.Errorf("the configured permission mode: %v", err)
	}
	a, err := permission.ParseMode(asked)
	if err != nil {
		return fmt.Errorf("permission_mode: %v", err)
	}
	if slices.Index(permission.Modes, a) > slices.Index(permission.Modes, c) {
		return fmt.Errorf("permission_mode %s is looser than the configured %s: a call may only ask for the same mode or a stricter one (%s); start rein mcp serve with --permission-mode %s to allow it", a, c, stricter(c), a)
	}
	return nil
}

// stricter lists the modes no looser than m.
func stricter(m permission.Mode) string {
	var s []string
	for _, x := range permission.Modes[:slices.Index(permission.Modes, m)+1] {
		s = append(s, string(x))
	}
	return strings.Join(s, ", ")
}
