package server

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/session"
)

// The page sizes of GET /audit.
const (
	defaultAuditLimit = 100
	maxAuditLimit     = 1000
)

type auditInput struct {
	SessionID string    `query:"session_id" maxLength:"128" doc:"Only the records of this session."`
	RunID     string    `query:"run_id" maxLength:"128" doc:"Only the records of this run."`
	Kind      string    `query:"kind" enum:"run,tool_call,permission,hook" doc:"Only records of this kind."`
	Since     time.Time `query:"since" doc:"Only records at or after this time (RFC 3339)."`
	Until     time.Time `query:"until" doc:"Only records before this time (RFC 3339)."`
	AfterID   int64     `query:"after_id" minimum:"0" doc:"Only records with a greater id: the last id of the previous page."`
	Limit     int       `query:"limit" minimum:"0" maximum:"1000" doc:"Page size; 0 means 100."`
}

type auditOutput struct {
	Body api.AuditList
}

func (s *Server) registerAudit() {
	op := s.operation(http.MethodGet, "/audit", "list-audit", "Query the caller's audit trail", http.StatusOK)
	op.Tags = []string{"audit"}
	op.Description = "Records of runs, tool calls, permission decisions and hook runs (SPEC API-7, PERM-4), by id " +
		"ascending; page with after_id."
	huma.Register(s.api, op, s.listAudit)
}

func (s *Server) listAudit(ctx context.Context, in *auditInput) (*auditOutput, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = defaultAuditLimit
	}
	recs, err := s.cfg.Ledger.Audit(ctx, session.AuditFilter{Caller: c, SessionID: in.SessionID, RunID: in.RunID,
		Kind: session.AuditKind(in.Kind), Since: in.Since, Until: in.Until, AfterID: in.AfterID, Limit: min(limit, maxAuditLimit)})
	if err != nil {
		return nil, s.fail(ctx, "reading the audit trail", err)
	}
	return &auditOutput{Body: api.AuditList{Items: api.FromAudits(recs)}}, nil
}
