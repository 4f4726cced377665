package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/session"
)

// errNoRoots refuses project workspaces on a server without roots.
var errNoRoots = errors.New("this server opens no project workspaces: start it with `rein serve --root DIR` to allow the directories under DIR, or open a chat workspace")

// resolveRoots makes the roots absolute and follows their symbolic links, so
// a directory is compared with what the roots really are.
func resolveRoots(roots []string) ([]string, error) {
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return nil, fmt.Errorf("server: root %s: %w", r, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("server: root %s is not a directory", r)
		}
		out = append(out, abs)
	}
	return out, nil
}

// projectDir checks the dir of a project workspace (SPEC WS-2) and returns
// it resolved: an absolute path that, with every symbolic link followed,
// names a directory under one of the roots. ".." and links cannot leave the
// roots; a path that does not exist is refused with the same words as one
// outside them, so callers cannot probe the file system.
func (s *Server) projectDir(dir string) (string, error) {
	if len(s.roots) == 0 {
		return "", invalid("body.dir", dir, errNoRoots.Error())
	}
	if dir == "" {
		return "", invalid("body.dir", dir, fmt.Sprintf("a project workspace needs dir: an absolute directory under %s", s.rootList()))
	}
	if !filepath.IsAbs(dir) {
		return "", invalid("body.dir", dir, fmt.Sprintf("dir %q is not an absolute path: give the full path of a directory under %s", dir, s.rootList()))
	}
	refuse := invalid("body.dir", dir, fmt.Sprintf("dir %q is not a directory under %s: open one of those, or ask the operator to add a root (rein serve --root DIR)", dir, s.rootList()))
	resolved, err := filepath.EvalSymlinks(filepath.Clean(dir))
	if err != nil {
		return "", refuse
	}
	if !s.underRoot(resolved) {
		return "", refuse
	}
	if fi, err := os.Stat(resolved); err != nil || !fi.IsDir() {
		return "", refuse
	}
	return resolved, nil
}

// underRoot reports whether the resolved path p is a root or lies under one.
func (s *Server) underRoot(p string) bool {
	for _, root := range s.roots {
		rel, err := filepath.Rel(root, p)
		if err == nil && (rel == "." || filepath.IsLocal(rel)) {
			return true
		}
	}
	return false
}

func (s *Server) rootList() string {
	if len(s.roots) == 1 {
		return s.roots[0]
	}
	return "one of " + strings.Join(s.roots, ", ")
}

type createWorkspaceInput struct {
	Body api.CreateWorkspace
}

type workspaceOutput struct {
	Body api.Workspace
}

type workspaceListOutput struct {
	Body api.WorkspaceList
}

type workspaceIDInput struct {
	ID string `path:"id" maxLength:"128" pattern:"^[A-Za-z0-9_-][A-Za-z0-9._-]*$" doc:"Workspace id."`
}

func (s *Server) registerWorkspaces() {
	op := s.operation(http.MethodPost, "/workspaces", "create-workspace", "Open a workspace", http.StatusCreated)
	op.Tags = []string{"workspaces"}
	op.Description = "A project workspace is a directory under one of the server's roots (rein serve --root DIR), " +
		"given as an absolute path; symbolic links are followed and must stay under the roots. A chat workspace " +
		"has no directory, tools or execution."
	huma.Register(s.api, op, s.createWorkspace)

	op = s.operation(http.MethodGet, "/workspaces", "list-workspaces", "List the caller's workspaces", http.StatusOK)
	op.Tags = []string{"workspaces"}
	huma.Register(s.api, op, s.listWorkspaces)

	op = s.operation(http.MethodGet, "/workspaces/{id}", "get-workspace", "Get a workspace", http.StatusOK, http.StatusNotFound)
	op.Tags = []string{"workspaces"}
	huma.Register(s.api, op, s.getWorkspace)
}

func (s *Server) createWorkspace(ctx context.Context, in *createWorkspaceInput) (*workspaceOutput, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	w := &session.Workspace{Caller: c, Kind: session.WorkspaceKind(in.Body.Kind), Name: in.Body.Name, CreatedAt: s.now()}
	switch in.Body.Kind {
	case api.KindProject:
		if w.Dir, err = s.projectDir(in.Body.Dir); err != nil {
			return nil, err
		}
	case api.KindChat:
		if in.Body.Dir != "" {
			return nil, invalid("body.dir", in.Body.Dir, "a chat workspace has no directory: leave dir out, or open a project workspace")
		}
	default: // the schema's enum refuses it first
		return nil, invalid("body.kind", in.Body.Kind, "kind must be project or chat")
	}
	if err := s.cfg.Ledger.CreateWorkspace(ctx, w); err != nil {
		return nil, s.fail(ctx, "opening the workspace", err)
	}
	return &workspaceOutput{Body: api.FromWorkspace(w)}, nil
}

func (s *Server) listWorkspaces(ctx context.Context, _ *struct{}) (*workspaceListOutput, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	ws, err := s.cfg.Ledger.ListWorkspaces(ctx, c)
	if err != nil {
		return nil, s.fail(ctx, "listing workspaces", err)
	}
	return &workspaceListOutput{Body: api.WorkspaceList{Items: api.FromWorkspaces(ws)}}, nil
}

func (s *Server) getWorkspace(ctx context.Context, in *workspaceIDInput) (*workspaceOutput, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	w, err := s.ownWorkspace(ctx, c, in.ID)
	if err != nil {
		return nil, err
	}
	return &workspaceOutput{Body: api.FromWorkspace(w)}, nil
}

// ownWorkspace returns the caller's workspace id; another caller's is not
// found, exactly like an unknown one.
func (s *Server) ownWorkspace(ctx context.Context, caller, id string) (*session.Workspace, error) {
	w, err := s.cfg.Ledger.GetWorkspace(ctx, id)
	if errors.Is(err, session.ErrNotFound) || errors.Is(err, session.ErrInvalid) || err == nil && w.Caller != caller {
		return nil, notFound("workspace", id, "GET /workspaces lists yours")
	}
	if err != nil {
		return nil, s.fail(ctx, "reading the workspace", err)
	}
	return w, nil
}
