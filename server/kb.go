package server

import (
	"context"
	"net/http"
	"path"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reinhq/rein/api"
)

type kbListOutput struct {
	Body api.KBDocumentList
}

type kbAddInput struct {
	ID   string `path:"id" maxLength:"128" pattern:"^[A-Za-z0-9_-][A-Za-z0-9._-]*$" doc:"Workspace id."`
	Body api.KBAdd
}

type kbAddOutput struct {
	Body api.KBAddReport
}

type kbSearchInput struct {
	ID    string `path:"id" maxLength:"128" pattern:"^[A-Za-z0-9_-][A-Za-z0-9._-]*$" doc:"Workspace id."`
	Q     string `query:"q" required:"true" minLength:"1" maxLength:"2000" doc:"What to look for: distinctive words (identifiers, names, error messages)."`
	Mode  string `query:"mode" enum:"keyword,hybrid" doc:"keyword: the keyword pass alone; hybrid: keyword and vector passes fused (keyword when no embedding model is configured). Absent: hybrid when the base has an embedding model."`
	Limit int    `query:"limit" minimum:"1" maximum:"50" default:"8" doc:"Hits at most."`
}

type kbSearchOutput struct {
	Body api.KBSearchResult
}

// registerKB registers the knowledge-base operations (SPEC KB-1 … KB-4
// over the API).
func (s *Server) registerKB() {
	if s.cfg.Workspaces == nil {
		return
	}
	op := s.operation(http.MethodGet, "/workspaces/{id}/kb", "list-kb", "List the documents of the workspace's knowledge base", http.StatusOK, http.StatusNotFound)
	op.Tags = []string{"kb"}
	op.Description = "The indexed documents, by path; none when the workspace has no knowledge base yet."
	huma.Register(s.api, op, s.listKB)

	op = s.operation(http.MethodPost, "/workspaces/{id}/kb", "add-kb", "Index files of the workspace", http.StatusOK, http.StatusNotFound)
	op.Tags = []string{"kb"}
	op.Description = "Indexes a file or a directory of the workspace (. for all of it) into its knowledge base, creating it: new and " +
		"changed files are indexed, unchanged ones skipped. The path is relative to the workspace: an absolute path, .. or a symbolic " +
		"link leading out of it is refused (422), and sensitive files (.env, keys, what the permission policy protects) are never indexed. " +
		"A chat workspace has no knowledge base (422)."
	huma.Register(s.api, op, s.addKB)

	op = s.operation(http.MethodGet, "/workspaces/{id}/kb/search", "search-kb", "Search the workspace's knowledge base", http.StatusOK, http.StatusNotFound)
	op.Tags = []string{"kb"}
	op.Description = "The chunks best matching q, as the kb_search tool finds them. A query of only stopwords or punctuation is 422; " +
		"a workspace without a knowledge base has no hits."
	huma.Register(s.api, op, s.searchKB)
}

func (s *Server) listKB(ctx context.Context, in *workspaceIDInput) (*kbListOutput, error) {
	w, err := s.callerWorkspace(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	docs, err := s.cfg.Workspaces.KBDocuments(ctx, w)
	if err != nil {
		return nil, s.fail(ctx, "listing the knowledge base", err)
	}
	if docs == nil {
		docs = []api.KBDocument{}
	}
	return &kbListOutput{Body: api.KBDocumentList{Documents: docs, Total: len(docs)}}, nil
}

func (s *Server) addKB(ctx context.Context, in *kbAddInput) (*kbAddOutput, error) {
	w, err := s.callerWorkspace(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	p, err := workspacePath(in.Body.Path)
	if err != nil {
		return nil, err
	}
	rep, err := s.cfg.Workspaces.KBAdd(ctx, w, p)
	if err != nil {
		return nil, s.fail(ctx, "indexing into the knowledge base", err)
	}
	return &kbAddOutput{Body: rep}, nil
}

// workspacePath checks a path a caller names in its workspace: relative,
// without .. leading out, no NUL; "." is the workspace itself. Links are
// the runner's to check (the knowledge base follows none out).
func workspacePath(p string) (string, error) {
	switch {
	case strings.ContainsRune(p, 0):
		return "", invalid("body.path", p, "path holds a NUL byte: name a file or directory of the workspace")
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || len(p) > 1 && p[1] == ':':
		return "", invalid("body.path", p, "path must be relative to the workspace (\".\" for all of it), not absolute")
	}
	clean := path.Clean(strings.ReplaceAll(p, `\`, "/"))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", invalid("body.path", p, "path leads out of the workspace (..): name a file or directory inside it, \".\" for all of it")
	}
	return clean, nil
}

func (s *Server) searchKB(ctx context.Context, in *kbSearchInput) (*kbSearchOutput, error) {
	w, err := s.callerWorkspace(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	res, err := s.cfg.Workspaces.KBSearch(ctx, w, in.Q, in.Mode, in.Limit)
	if err != nil {
		return nil, s.fail(ctx, "searching the knowledge base", err)
	}
	if res.Hits == nil {
		res.Hits = []api.KBHit{}
	}
	return &kbSearchOutput{Body: *res}, nil
}
