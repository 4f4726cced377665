package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/mirror"
	"github.com/reinhq/rein/session/sqlite"
	"github.com/reinhq/rein/workspace"
)

const mirrorLong = `A project workspace served by rein serve keeps a copy of its sessions in
.rein/data/history.db, a SQLite database of the same schema as the server's
(SPEC API-6): rein serve copies each session there after its runs, in the
background, when the workspace has a .rein directory. The server's store stays
the truth; the mirror can always be made again from it.

  sqlite3 -readonly .rein/data/history.db \
    "SELECT id, json_extract(meta, '$.title') FROM sessions ORDER BY updated_at DESC"

See docs/history-mirror.md.`

const mirrorRebuildLong = `Recreate a project workspace's history mirror from the server's store: every
session of the workspace's directory, with its metadata and its entries, seqs
included. The new mirror is written beside the old one and renamed over it, so
a reader sees the old file or the new one, never half of one.

--workspace names the workspace by its id or its directory (default: the
current directory). The store is the one rein serve uses: SQLite under
--data-dir, or PostgreSQL with --database-url (or REIN_DATABASE_URL). Run it
while nothing else has the mirror open; rein serve closes a mirror it has not
written for a minute.`

type mirrorOptions struct {
	workspace, dataDir, databaseURL string
}

// mirrorCommand is rein mirror: the history mirrors of project workspaces.
func (a *App) mirrorCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mirror",
		Short: "Manage the history mirrors of project workspaces (.rein/data/history.db)",
		Long:  mirrorLong,
		Args:  cobra.NoArgs,
	}
	o := &mirrorOptions{}
	rebuild := &cobra.Command{
		Use:   "rebuild",
		Short: "Recreate a project workspace's history mirror from the server's store",
		Long:  mirrorRebuildLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.mirrorRebuild(cmd.Context(), o)
		},
	}
	f := rebuild.Flags()
	f.StringVar(&o.workspace, "workspace", "", "workspace id or project directory (default: the current directory)")
	f.StringVar(&o.dataDir, "data-dir", "", "the data directory of rein serve (default: rein's data directory/server)")
	f.StringVar(&o.databaseURL, "database-url", "", "PostgreSQL URL of the server's store instead of SQLite; REIN_DATABASE_URL too")
	cmd.AddCommand(rebuild)
	return cmd
}

// mirrorRebuild runs rein mirror rebuild.
func (a *App) mirrorRebuild(ctx context.Context, o *mirrorOptions) error {
	ref, err := a.mirrorRef(o.workspace)
	if err != nil {
		return err
	}
	dataDir := a.serverDataDir(o.dataDir)
	if o.databaseURL == "" && a.getenv("REIN_DATABASE_URL") == "" {
		// Opening a missing database would create an empty one.
		if _, err := os.Stat(filepath.Join(dataDir, "rein.db")); err != nil {
			return fail(ExitError, "no server database in %s: give the --data-dir rein serve uses, or --database-url", dataDir)
		}
	}
	db, _, err := a.openServerStore(ctx, &serveOptions{databaseURL: o.databaseURL}, dataDir)
	if err != nil {
		return err
	}
	defer db.Close()
	m, err := mirror.New(mirror.Config{Store: db, Ledger: db, Open: openMirrorDB})
	if err != nil {
		return fail(ExitError, "%v", err)
	}
	defer m.Close(context.WithoutCancel(ctx))
	res, err := m.Rebuild(ctx, ref)
	if err != nil {
		return fail(ExitError, "%v", err)
	}
	fmt.Fprintf(a.Stdout, "rebuilt %s: %d session(s), %d entries\n", res.Path, res.Sessions, res.Entries)
	for _, id := range res.Skipped {
		fmt.Fprintf(a.Stderr, "rein: session %s left out: its log in the store has gaps in its seqs\n", id)
	}
	return nil
}

// mirrorRef turns --workspace into what Mirror.Rebuild takes: an existing
// directory (relative to the current one) becomes its absolute path with
// links resolved, as the server stores workspace directories; anything
// else is taken for a workspace id.
func (a *App) mirrorRef(ref string) (string, error) {
	p := a.abs(ref)
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		return p, nil
	}
	if ref == "" || filepath.IsAbs(ref) || strings.ContainsRune(ref, filepath.Separator) || strings.HasPrefix(ref, ".") {
		return "", usageErrorf("--workspace %s: no such directory; give a project directory or a workspace id", p)
	}
	return ref, nil
}

// serverDataDir is the data directory of rein serve: flag, or rein's data
// directory/server, absolute.
func (a *App) serverDataDir(flag string) string {
	if flag == "" {
		flag = filepath.Join(workspace.PathsFrom(a.getenv).DataDir, "server")
	}
	return a.abs(flag)
}

// serveMirror starts the history mirror of rein serve, or returns nil when
// --history-mirror=false.
func serveMirror(on bool, db serverStore, logger *slog.Logger) *mirror.Mirror {
	if !on {
		return nil
	}
	m, err := mirror.New(mirror.Config{Store: db, Ledger: db, Open: openMirrorDB, Logger: logger})
	if err != nil { // not possible: everything it needs is given
		logger.Error("history mirror not started", "err", err)
		return nil
	}
	return m
}

// openMirrorDB opens a history mirror with session/sqlite: synchronous
// NORMAL (a mirror is made again from the store, so the last writes lost
// to a power cut cost nothing), waiting at most 2 s for another process's
// lock (the mirror retries later), two connections.
func openMirrorDB(path string) (mirror.DB, error) {
	db, err := sqlite.Open(path, sqlite.Options{Sync: sqlite.SyncNormal, BusyTimeout: 2 * time.Second, MaxConns: 2})
	if err != nil {
		if errors.Is(err, sqlite.ErrNewerSchema) {
			return nil, fmt.Errorf("%w (a newer rein wrote it: delete it or rebuild it with that rein)", err)
		}
		return nil, err
	}
	return db, nil
}
