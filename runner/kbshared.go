package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/reinhq/rein/kb"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tool/builtin"
	"github.com/reinhq/rein/workspace"
)

// A server whose store is PostgreSQL (rein serve and rein worker with
// --database-url) keeps its workspaces' knowledge bases there too (SPEC
// KB-3, API-9), one a namespace keyed by the caller and the workspace, so
// that every process of a deployment — API processes and workers — sees
// the same ones and no caller's documents reach another's searches.
// Without one, a workspace's knowledge base is its KBFile, as for the CLI.

// KBStore is a knowledge base in a shared database: a kb.Backend over one
// namespace (kb/postgres's Store is one). Closing it leaves the database
// open.
type KBStore interface {
	kb.Backend
	// Exists reports whether anything was ever written to the namespace.
	Exists(ctx context.Context) (bool, error)
}

// KBNamespaces opens the knowledge base of a namespace of the shared
// database, without connecting (the front end wires kb/postgres's
// DB.Store; the runner does not import a database driver).
type KBNamespaces func(namespace string) (KBStore, error)

// KBNamespace is the namespace of the knowledge base of workspace
// workspaceID of caller in a shared database:
// "caller/<SHA-256 of the caller, hex>/ws/<workspace id>". The caller is
// hashed so that any caller id (up to 256 bytes, any characters) gives a
// namespace of one alphabet and bounded length, which another caller's
// cannot equal; the workspace id keeps the workspaces of one caller apart.
func KBNamespace(caller, workspaceID string) string {
	h := sha256.Sum256([]byte(caller))
	return "caller/" + hex.EncodeToString(h[:]) + "/ws/" + workspaceID
}

// kbExistsWait bounds the check, at a run's start, that the shared
// database holds the workspace's knowledge base.
const kbExistsWait = 10 * time.Second

// sharedKBExists reports whether the run's namespace of the shared
// database was ever written to; a failure leaves kb_search out, with a
// note.
func (s *Setup) sharedKBExists() bool {
	st, err := s.cfg.KnowledgeBases(s.cfg.KBNamespace)
	if err != nil {
		s.note("kb_search is off: %v", err)
		return false
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), kbExistsWait)
	defer cancel()
	ok, err := st.Exists(ctx)
	if err != nil {
		s.note("kb_search is off: the knowledge-base database did not answer: %v", err)
		return false
	}
	return ok
}

// openShared opens namespace ns of the shared database as the knowledge
// base of the workspace l loaded.
func openShared(open KBNamespaces, ns string, l *workspace.Loaded, reg *registry.Registry, embed EmbedderResolver,
	fence *builtin.Fence) (*KnowledgeBase, error) {
	if ns == "" {
		return nil, errors.New("runner: a shared knowledge base needs a namespace (Config.KBNamespace)")
	}
	st, err := open(ns)
	if err != nil {
		return nil, err
	}
	k, err := newKnowledgeBase(l, reg, embed, st, fence)
	if err != nil {
		return nil, err
	}
	k.Namespace = ns
	return k, nil
}

// KnowledgeBase opens the knowledge base of caller's workspace
// workspaceID — the one its runs' kb_search searches — for the caller to
// add documents to (paths under the workspace's directory), list, remove
// and search; the caller closes it. With ServiceConfig.KnowledgeBases (a
// server on PostgreSQL) it is the workspace's namespace there
// ([KBNamespace]), seen alike by every process of the deployment;
// otherwise the workspace's KBFile, created when missing. Another
// caller's workspace is not found, exactly like an unknown one
// (session.ErrNotFound); a chat workspace has none (session.ErrInvalid:
// its runs have no tools).
func (s *Service) KnowledgeBase(ctx context.Context, caller, workspaceID string) (*KnowledgeBase, error) {
	ws, err := s.cfg.Ledger.GetWorkspace(ctx, workspaceID)
	if errors.Is(err, session.ErrNotFound) || errors.Is(err, session.ErrInvalid) || err == nil && ws.Caller != caller {
		return nil, fmt.Errorf("workspace %s: %w", workspaceID, session.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	if ws.Kind == session.WorkspaceChat {
		return nil, fmt.Errorf("%w: workspace %s is a chat workspace: its runs have no tools, so it has no knowledge base; "+
			"open a project workspace", session.ErrInvalid, ws.ID)
	}
	if err := checkWorkspaceDir(ws); err != nil {
		return nil, err
	}
	loaded, err := s.loadWorkspace(ws.Caller, ws.Dir, nil)
	if err != nil {
		return nil, err
	}
	rc, err := loaded.RegistryConfig(s.cfg.Getenv)
	if err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	reg, err := registry.New(rc)
	if err != nil {
		return nil, fmt.Errorf("provider profiles: %w", err)
	}
	// What the runs' tools may not reach (the server's data directory,
	// other roots: Tenancy.Hidden) is never indexed either.
	fence := s.cfg.Tenancy.fence(loaded.Workspace.Root)
	if s.cfg.KnowledgeBases != nil {
		return openShared(s.cfg.KnowledgeBases, KBNamespace(ws.Caller, ws.ID), loaded, reg, s.cfg.ResolveEmbedder, &fence)
	}
	return openKnowledgeBase(loaded, reg, s.cfg.ResolveEmbedder, true, &fence)
}

// checkWorkspaceDir refuses a project workspace whose directory is now a
// link: it was checked against the server's roots with its symlinks
// resolved, and one swapped since for a symlink would lead elsewhere.
func checkWorkspaceDir(ws *session.Workspace) error {
	real, err := filepath.EvalSymlinks(ws.Dir)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", ws.ID, err)
	}
	if real != ws.Dir {
		return fmt.Errorf("workspace %s: its directory %s is now a link to %s; open the workspace again", ws.ID, ws.Dir, real)
	}
	return nil
}
