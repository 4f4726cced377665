package server

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reinhq/rein/api"
)

type sessionContextOutput struct {
	Body api.SessionContext
}

// registerSessionContext registers GET /sessions/{id}/context.
func (s *Server) registerSessionContext() {
	if s.cfg.Workspaces == nil {
		return
	}
	op := s.operation(http.MethodGet, "/sessions/{id}/context", "session-context", "Show what the next run offers its model", http.StatusOK, http.StatusNotFound)
	op.Tags = []string{"sessions"}
	op.Description = "The system prompt and the tools the next run of the session would send its model before the conversation, " +
		"with their sizes, built as a run builds them for the caller (SPEC API-10; `rein run --dry-run` is the same on the command line). " +
		"No model is called and no hook runs; the MCP servers a run would start are started, as their tools are part of it."
	huma.Register(s.api, op, s.sessionContext)
}

func (s *Server) sessionContext(ctx context.Context, in *sessionIDInput) (*sessionContextOutput, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	sess, err := s.ownSession(ctx, c, in.ID)
	if err != nil {
		return nil, err
	}
	out, err := s.cfg.Workspaces.SessionContext(ctx, sess, c)
	if err != nil {
		return nil, s.fail(ctx, "building the session's context", err)
	}
	return &sessionContextOutput{Body: *out}, nil
}
