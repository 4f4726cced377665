package server

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/session"
)

// WorkspaceData is what the server needs of the runner to show a
// workspace's capabilities, memory and knowledge base (SPEC API-1, API-10):
// the runner loads the workspace as a run would. The front hands it in
// (Config.Workspaces), converting the runner's values to api types, so this
// package stays clear of what the runner reaches. The server has checked
// that the workspace is the caller's; errors wrapping session.ErrInvalid
// are the caller's to fix (422, their text the detail), session.ErrNotFound
// a 404.
type WorkspaceData interface {
	// Catalog lists what a run in w may use.
	Catalog(ctx context.Context, w *session.Workspace) (*api.Catalog, error)
	// MemoryNotes lists the notes of w's memory, in file order, each with
	// the scanner's verdict.
	MemoryNotes(ctx context.Context, w *session.Workspace) ([]api.MemoryNote, error)
	// AddMemoryNote adds a note through the memory tool's scanner; a
	// refusal wraps session.ErrInvalid and says the verdict.
	AddMemoryNote(ctx context.Context, w *session.Workspace, text, scope string) (api.MemoryNote, error)
	// DeleteMemoryNote removes the note id (session.ErrNotFound: none).
	DeleteMemoryNote(ctx context.Context, w *session.Workspace, id string) error
	// KBDocuments lists the documents of w's knowledge base (none when it
	// has none).
	KBDocuments(ctx context.Context, w *session.Workspace) ([]api.KBDocument, error)
	// KBAdd indexes path, relative to w's directory.
	KBAdd(ctx context.Context, w *session.Workspace, path string) (api.KBAddReport, error)
	// KBSearch searches w's knowledge base; mode is keyword, hybrid or ""
	// (the base's own), limit the hits at most.
	KBSearch(ctx context.Context, w *session.Workspace, query, mode string, limit int) (*api.KBSearchResult, error)
	// SessionContext is the system prompt and tools the next run of s
	// would offer its model, built as a run builds them for the caller.
	SessionContext(ctx context.Context, s *session.Session, caller string) (*api.SessionContext, error)
}

type catalogOutput struct {
	Body api.Catalog
}

// registerCatalog registers GET /workspaces/{id}/catalog.
func (s *Server) registerCatalog() {
	if s.cfg.Workspaces == nil {
		return
	}
	op := s.operation(http.MethodGet, "/workspaces/{id}/catalog", "workspace-catalog", "List what a run in the workspace may use", http.StatusOK, http.StatusNotFound)
	op.Tags = []string{"workspaces"}
	op.Description = "The agents, skills, actions, commands and MCP servers that apply in the workspace — its own only once " +
		"the operator trusted it (SPEC PERM-5) — the models of the server's model table and the default model (SPEC API-1). " +
		"Listing starts no MCP server: their state is this process's connection's."
	huma.Register(s.api, op, s.catalog)
}

func (s *Server) catalog(ctx context.Context, in *workspaceIDInput) (*catalogOutput, error) {
	w, err := s.callerWorkspace(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	c, err := s.cfg.Workspaces.Catalog(ctx, w)
	if err != nil {
		return nil, s.fail(ctx, "listing the workspace's catalog", err)
	}
	return &catalogOutput{Body: *c}, nil
}

// callerWorkspace returns the workspace id when it is the caller's (else a
// 404, as for an unknown one).
func (s *Server) callerWorkspace(ctx context.Context, id string) (*session.Workspace, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	return s.ownWorkspace(ctx, c, id)
}
