package api

import (
	"encoding/json"

	"github.com/reinhq/rein/session"
)

// FromWorkspace converts a stored workspace to its wire form.
func FromWorkspace(w *session.Workspace) Workspace {
	return Workspace{ID: w.ID, Kind: string(w.Kind), Dir: w.Dir, Name: w.Name, CreatedAt: w.CreatedAt}
}

// FromSession converts a session's metadata to its wire form. Its work
// directory and caller stay behind: the workspace says the one, the other is
// the caller asking.
func FromSession(s *session.Session) Session {
	return Session{
		ID:          s.ID,
		WorkspaceID: s.Workspace,
		Title:       s.Title,
		Preview:     s.Preview,
		CreatedAt:   s.CreatedAt,
		UpdatedAt:   s.UpdatedAt,
		ParentID:    s.ParentID,
		ForkSeq:     s.ForkSeq,
		Model:       s.Model,
		Usage:       s.Usage,
		CostUSD:     s.CostUSD,
		Runs:        s.Runs,

		PermissionMode: s.PermissionMode,
	}
}

// FromRun converts a run to its wire form; its options and caller stay
// behind.
func FromRun(r *session.Run) Run {
	return Run{
		ID:        r.ID,
		SessionID: r.SessionID,
		Status:    string(r.Status),
		Prompt:    r.Prompt,
		CreatedAt: r.CreatedAt,
		StartedAt: r.StartedAt,
		EndedAt:   r.EndedAt,
		Reason:    r.Reason,
		Error:     r.Error,
		Turns:     r.Turns,
		Usage:     r.Usage,
		CostUSD:   r.CostUSD,
	}
}

// FromAudit converts an audit record to its wire form; its caller stays
// behind. Data that is empty or not JSON becomes an empty object, so the
// body always decodes.
func FromAudit(a *session.AuditRecord) AuditRecord {
	data := a.Data
	if len(data) == 0 || !json.Valid(data) {
		data = json.RawMessage("{}")
	}
	return AuditRecord{ID: a.ID, Time: a.Time, SessionID: a.SessionID, RunID: a.RunID, Kind: string(a.Kind), Data: data}
}

// FromWorkspaces converts a list; nil becomes an empty list, so "items" is
// always an array.
func FromWorkspaces(ws []*session.Workspace) []Workspace {
	out := make([]Workspace, 0, len(ws))
	for _, w := range ws {
		out = append(out, FromWorkspace(w))
	}
	return out
}

// FromSessions converts a list; nil becomes an empty list.
func FromSessions(ss []*session.Session) []Session {
	out := make([]Session, 0, len(ss))
	for _, s := range ss {
		out = append(out, FromSession(s))
	}
	return out
}

// FromRuns converts a list; nil becomes an empty list.
func FromRuns(rs []*session.Run) []Run {
	out := make([]Run, 0, len(rs))
	for _, r := range rs {
		out = append(out, FromRun(r))
	}
	return out
}

// FromAudits converts a list; nil becomes an empty list.
func FromAudits(as []session.AuditRecord) []AuditRecord {
	out := make([]AuditRecord, 0, len(as))
	for i := range as {
		out = append(out, FromAudit(&as[i]))
	}
	return out
}
