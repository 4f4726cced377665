package mirror

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reinhq/rein/session"
)

// Rebuild recreates the history mirror of a project workspace — ref is its
// id or its absolute directory — from the store: written to a temporary
// file beside it, then renamed over it, so a reader opening the mirror
// sees the old file or the new one, never half of one. Run it while no
// other process has the mirror open (rein serve closes an idle one after
// IdleClose).
func (m *Mirror) Rebuild(ctx context.Context, ref string) (RebuildResult, error) {
	dir, err := m.resolve(ctx, ref)
	if err != nil {
		return RebuildResult{}, err
	}
	m.work.Lock()
	defer m.work.Unlock()
	if reason := mirrorUnusable(dir); reason != "" {
		return RebuildResult{}, fmt.Errorf("history mirror of %s: %s", dir, reason)
	}
	res := RebuildResult{Path: filepath.Join(dir, File)}
	tmp, err := m.buildMirror(ctx, dir, &res)
	if err != nil {
		return RebuildResult{}, fmt.Errorf("history mirror %s: rebuild: %w", res.Path, err)
	}
	m.closeHandle(dir)
	for _, s := range []string{"-wal", "-shm"} { // the old file's, which would be taken for the new one's
		os.Remove(res.Path + s)
	}
	if err := os.Rename(tmp, res.Path); err != nil {
		removeDB(tmp)
		return RebuildResult{}, fmt.Errorf("history mirror %s: rebuild: %w", res.Path, err)
	}
	if d, err := os.Open(filepath.Dir(res.Path)); err == nil {
		d.Sync()
		d.Close()
	}
	clear(m.checked)
	for _, id := range res.Skipped {
		m.broken[id] = true
	}
	return res, nil
}

// resolve turns a workspace id or an absolute directory into the
// directory of a project workspace.
func (m *Mirror) resolve(ctx context.Context, ref string) (string, error) {
	if filepath.IsAbs(ref) {
		return filepath.Clean(ref), nil
	}
	if err := session.ValidID(ref); err != nil {
		return "", fmt.Errorf("history mirror: %q is neither a workspace id nor an absolute directory", ref)
	}
	ws, err := m.cfg.Ledger.GetWorkspace(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("history mirror: workspace %s: %w (give a workspace id of this server or a project directory)", ref, err)
	}
	if ws.Kind != session.WorkspaceProject || ws.Dir == "" {
		return "", fmt.Errorf("history mirror: workspace %s is a %s workspace: only project workspaces have a mirror", ref, ws.Kind)
	}
	return ws.Dir, nil
}

// buildMirror writes the mirror of dir into a new temporary file beside
// it and returns its path, closed and complete.
func (m *Mirror) buildMirror(ctx context.Context, dir string, res *RebuildResult) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(res.Path), filepath.Base(res.Path)+".rebuild-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	f.Close()
	db, err := m.cfg.Open(tmp)
	if err != nil {
		removeDB(tmp)
		return "", err
	}
	err = m.fill(ctx, db, dir, res)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if _, serr := os.Lstat(tmp + "-wal"); err == nil && serr == nil {
		err = errors.New("the new mirror's log was not folded into it on close")
	}
	if err != nil {
		removeDB(tmp)
		return "", err
	}
	return tmp, nil
}

// fill copies every session of dir's project workspaces into db.
func (m *Mirror) fill(ctx context.Context, db DB, dir string, res *RebuildResult) error {
	list, err := listSessions(ctx, m.cfg.Store, dir)
	if err != nil {
		return err
	}
	for _, s := range list {
		if d, err := m.dirOf(ctx, s); errors.Is(err, errSkip) || err == nil && d != dir {
			continue
		} else if err != nil {
			return err
		}
		n, err := m.copyWhole(ctx, db, s)
		if errors.Is(err, errGapped) {
			if derr := db.Delete(ctx, s.ID); derr != nil {
				return derr
			}
			res.Skipped = append(res.Skipped, s.ID)
			m.cfg.Logger.Warn("history mirror: session left out of the rebuild: its seqs cannot be kept", "session_id", s.ID, "err", err)
			continue
		}
		if err != nil {
			return fmt.Errorf("session %s: %w", s.ID, err)
		}
		delete(m.broken, s.ID)
		res.Sessions++
		res.Entries += n
	}
	return nil
}

// removeDB removes a database file and its companions.
func removeDB(path string) {
	for _, s := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + s)
	}
}
