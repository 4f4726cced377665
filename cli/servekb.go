package cli

import (
	"context"
	"time"

	kbpostgres "github.com/reinhq/rein/kb/postgres"
	"github.com/reinhq/rein/runner"
)

// openServerKB opens where a server keeps its workspaces' knowledge bases
// (SPEC KB-3, API-9): with --database-url (or REIN_DATABASE_URL) the same
// PostgreSQL database as its sessions, one namespace per caller and
// workspace, so that API processes and workers share them; it returns nil
// without one (each project workspace keeps .rein/data/kb.db) and the
// DB to close at the end.
func (a *App) openServerKB(ctx context.Context, o *serveOptions) (runner.KBNamespaces, func() error, error) {
	url := a.databaseURL(o)
	if url == "" {
		return nil, nil, nil
	}
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	db, err := kbpostgres.OpenDB(octx, url, kbpostgres.Options{MaxConns: o.databaseMaxConns})
	if err != nil {
		return nil, nil, fail(ExitError, "--database-url: the knowledge bases: %v", err)
	}
	return func(ns string) (runner.KBStore, error) { return db.Store(ns) }, db.Close, nil
}
