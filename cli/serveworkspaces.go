package cli

import (
	"context"
	"strings"
	"time"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/server"
	"github.com/reinhq/rein/session"
)

// serviceWorkspaces hands the service's view of a workspace — its catalog,
// memory and knowledge base (SPEC API-1, API-10) — to the server, as wire
// types.
type serviceWorkspaces struct {
	svc *runner.Service
	now func() time.Time
}

var _ server.WorkspaceData = serviceWorkspaces{}

// Catalog implements server.WorkspaceData.
func (s serviceWorkspaces) Catalog(ctx context.Context, w *session.Workspace) (*api.Catalog, error) {
	c, err := s.svc.Catalog(ctx, w)
	if err != nil {
		return nil, err
	}
	out := &api.Catalog{Trusted: c.Trusted, Kind: c.Kind, DefaultModel: c.DefaultModel, Agents: []api.CatalogAgent{},
		Skills: items(c.Skills), Actions: items(c.Actions), Commands: items(c.Commands), MCPServers: []api.CatalogMCP{},
		Models: []api.CatalogModel{}}
	for _, a := range c.Agents {
		out.Agents = append(out.Agents, api.CatalogAgent{Name: a.Name, Description: a.Description, Model: a.Model})
	}
	for _, m := range c.MCPServers {
		out.MCPServers = append(out.MCPServers, api.CatalogMCP{Name: m.Name, Transport: m.Transport, State: m.State, Error: m.Error, Tools: m.Tools})
	}
	for _, m := range c.Models {
		out.Models = append(out.Models, api.CatalogModel{ID: m.Provider + "/" + m.Name, Provider: m.Provider, ContextWindow: m.ContextWindow})
	}
	return out, nil
}

func items(in []runner.CatalogItem) []api.CatalogItem {
	out := make([]api.CatalogItem, 0, len(in))
	for _, i := range in {
		out = append(out, api.CatalogItem{Name: i.Name, Description: i.Description})
	}
	return out
}

// MemoryNotes implements server.WorkspaceData.
func (s serviceWorkspaces) MemoryNotes(ctx context.Context, w *session.Workspace) ([]api.MemoryNote, error) {
	notes, err := s.svc.MemoryNotes(ctx, w)
	if err != nil {
		return nil, err
	}
	out := make([]api.MemoryNote, 0, len(notes))
	for _, n := range notes {
		out = append(out, api.MemoryNote{ID: n.ID, Scope: "workspace", Text: n.Text, Verdict: n.Verdict})
	}
	return out, nil
}

// AddMemoryNote implements server.WorkspaceData.
func (s serviceWorkspaces) AddMemoryNote(ctx context.Context, w *session.Workspace, text, scope string) (api.MemoryNote, error) {
	n, err := s.svc.AddMemoryNote(ctx, w, text, scope)
	if err != nil {
		return api.MemoryNote{}, err
	}
	out := api.MemoryNote{ID: n.ID, Scope: "workspace", Text: n.Text, Verdict: n.Verdict}
	if n.Added {
		out.CreatedAt = s.now().UTC()
	}
	return out, nil
}

// DeleteMemoryNote implements server.WorkspaceData.
func (s serviceWorkspaces) DeleteMemoryNote(ctx context.Context, w *session.Workspace, id string) error {
	return s.svc.DeleteMemoryNote(ctx, w, id)
}

// KBDocuments implements server.WorkspaceData.
func (s serviceWorkspaces) KBDocuments(ctx context.Context, w *session.Workspace) ([]api.KBDocument, error) {
	docs, err := s.svc.KBDocuments(ctx, w)
	if err != nil {
		return nil, err
	}
	out := make([]api.KBDocument, 0, len(docs))
	for _, d := range docs {
		out = append(out, api.KBDocument{Path: d.Path, Chunks: d.Chunks, IndexedAt: d.Indexed})
	}
	return out, nil
}

// KBAdd implements server.WorkspaceData.
func (s serviceWorkspaces) KBAdd(ctx context.Context, w *session.Workspace, path string) (api.KBAddReport, error) {
	rep, err := s.svc.KBAdd(ctx, w, path)
	if err != nil {
		return api.KBAddReport{}, err
	}
	return api.KBAddReport{Added: rep.Added, Updated: rep.Updated, Skipped: len(rep.Skipped)}, nil
}

// KBSearch implements server.WorkspaceData.
func (s serviceWorkspaces) KBSearch(ctx context.Context, w *session.Workspace, query, mode string, limit int) (*api.KBSearchResult, error) {
	res, err := s.svc.KBSearch(ctx, w, query, mode, limit)
	if err != nil {
		return nil, err
	}
	out := &api.KBSearchResult{Mode: res.Mode, Hits: []api.KBHit{}}
	for _, h := range res.Hits {
		var lines []string
		for _, l := range h.Snippet {
			lines = append(lines, l.Text)
		}
		snippet := strings.Join(lines, "\n")
		if len(h.Snippet) == 0 {
			snippet = h.Text
		}
		out.Hits = append(out.Hits, api.KBHit{Path: h.Doc, StartLine: h.Start, EndLine: h.End, Heading: h.Heading, Snippet: snippet, Score: h.Score})
	}
	return out, nil
}

// SessionContext implements server.WorkspaceData.
func (s serviceWorkspaces) SessionContext(ctx context.Context, sess *session.Session, caller string) (*api.SessionContext, error) {
	d, err := s.svc.SessionContext(ctx, sess, caller)
	if err != nil {
		return nil, err
	}
	req := d.Request
	out := &api.SessionContext{Model: req.Model, System: req.System, SystemBytes: len(req.System), MaxTokens: req.MaxTokens,
		Tools: make([]api.ContextTool, 0, len(d.Tools)), Skills: d.Skills, Warnings: d.Warnings}
	for i, spec := range req.Tools {
		n := len(spec.Name) + len(spec.Description) + len(spec.InputSchema)
		t := api.ContextTool{Name: spec.Name, Bytes: n}
		if i < len(d.Tools) {
			t.Origin = string(d.Tools[i].Origin)
		}
		out.Tools = append(out.Tools, t)
		out.ToolsBytes += n
	}
	return out, nil
}
