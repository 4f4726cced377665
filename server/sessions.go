package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/session"
)

type createSessionInput struct {
	Body api.CreateSession
}

type sessionOutput struct {
	Body api.Session
}

type sessionIDInput struct {
	ID string `path:"id" maxLength:"128" pattern:"^[A-Za-z0-9_-][A-Za-z0-9._-]*$" doc:"Session id."`
}

type listSessionsInput struct {
	WorkspaceID string `query:"workspace_id" maxLength:"128" doc:"Only the sessions of this workspace."`
	Limit       int    `query:"limit" minimum:"0" maximum:"500" doc:"Page size; 0 means 100."`
	Cursor      string `query:"cursor" maxLength:"1024" doc:"The next_cursor of the previous page."`
}

type sessionListOutput struct {
	Body api.SessionList
}

type updateSessionInput struct {
	ID   string `path:"id" maxLength:"128" pattern:"^[A-Za-z0-9_-][A-Za-z0-9._-]*$" doc:"Session id."`
	Body api.UpdateSession
}

type forkInput struct {
	ID   string    `path:"id" maxLength:"128" pattern:"^[A-Za-z0-9_-][A-Za-z0-9._-]*$" doc:"Session id."`
	Body *api.Fork `required:"false"`
}

func (s *Server) registerSessions() {
	op := s.operation(http.MethodPost, "/sessions", "create-session", "Create a session in a workspace", http.StatusCreated, http.StatusNotFound)
	op.Tags = []string{"sessions"}
	huma.Register(s.api, op, s.createSession)

	op = s.operation(http.MethodGet, "/sessions", "list-sessions", "List the caller's sessions, newest first", http.StatusOK, http.StatusNotFound)
	op.Tags = []string{"sessions"}
	huma.Register(s.api, op, s.listSessions)

	op = s.operation(http.MethodGet, "/sessions/{id}", "get-session", "Get a session", http.StatusOK, http.StatusNotFound)
	op.Tags = []string{"sessions"}
	huma.Register(s.api, op, s.getSession)

	op = s.operation(http.MethodPatch, "/sessions/{id}", "update-session", "Change a session's title or permission mode", http.StatusOK, http.StatusNotFound)
	op.Tags = []string{"sessions"}
	op.Description = "Changes the fields given: title, permission_mode (SPEC PERM-7). The mode applies from the session's next run; " +
		"a run going on keeps its own. After a run stopped at a plan (done reason plan_ready), setting default or accept-edits " +
		"and sending a message approves the plan."
	huma.Register(s.api, op, s.updateSession)

	op = s.operation(http.MethodDelete, "/sessions/{id}", "delete-session", "Delete a session", http.StatusNoContent, http.StatusNotFound, http.StatusConflict)
	op.Tags = []string{"sessions"}
	op.Description = "Deletes the session, its log, runs and stored events, stops its background jobs and removes its files " +
		"(spilled command output, job logs, its sandbox cache); its audit records stay. " +
		"A session with a queued or running run cannot be deleted (409): cancel the run first."
	huma.Register(s.api, op, s.deleteSession)

	op = s.operation(http.MethodPost, "/sessions/{id}/fork", "fork-session", "Fork a session", http.StatusCreated, http.StatusNotFound)
	op.Tags = []string{"sessions"}
	op.Description = "Creates a session holding the entries up to at_seq (all when 0 or no body), moved so no tool call is cut from its results."
	huma.Register(s.api, op, s.forkSession)
}

func (s *Server) createSession(ctx context.Context, in *createSessionInput) (*sessionOutput, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	w, err := s.ownWorkspace(ctx, c, in.Body.WorkspaceID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	sess := &session.Session{Caller: c, Workspace: w.ID, WorkDir: w.Dir, Title: in.Body.Title, CreatedAt: now, UpdatedAt: now,
		PermissionMode: in.Body.PermissionMode}
	if err := s.cfg.Sessions.Create(ctx, sess); err != nil {
		return nil, s.fail(ctx, "creating the session", err)
	}
	s.sessionChanged(sess.ID)
	return &sessionOutput{Body: api.FromSession(sess)}, nil
}

func (s *Server) listSessions(ctx context.Context, in *listSessionsInput) (*sessionListOutput, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if in.WorkspaceID != "" {
		if _, err := s.ownWorkspace(ctx, c, in.WorkspaceID); err != nil {
			return nil, err
		}
	}
	list, next, err := s.cfg.Sessions.List(ctx, session.ListOptions{Caller: c, Workspace: in.WorkspaceID, Limit: in.Limit, Cursor: in.Cursor})
	if errors.Is(err, session.ErrInvalid) {
		return nil, invalid("query.cursor", in.Cursor, "cursor is not one this server handed out: pass the next_cursor of the previous page, or leave it out to start over")
	}
	if err != nil {
		return nil, s.fail(ctx, "listing sessions", err)
	}
	return &sessionListOutput{Body: api.SessionList{Items: api.FromSessions(list), NextCursor: next}}, nil
}

func (s *Server) getSession(ctx context.Context, in *sessionIDInput) (*sessionOutput, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	sess, err := s.ownSession(ctx, c, in.ID)
	if err != nil {
		return nil, err
	}
	return &sessionOutput{Body: api.FromSession(sess)}, nil
}

func (s *Server) updateSession(ctx context.Context, in *updateSessionInput) (*sessionOutput, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	sess, err := s.ownSession(ctx, c, in.ID)
	if err != nil {
		return nil, err
	}
	if in.Body.Title != nil {
		sess.Title = *in.Body.Title
	}
	if in.Body.PermissionMode != nil {
		sess.PermissionMode = *in.Body.PermissionMode
	}
	sess.UpdatedAt = s.now()
	if err := s.cfg.Sessions.Update(ctx, sess); err != nil {
		return nil, s.fail(ctx, "updating the session", err)
	}
	s.sessionChanged(sess.ID)
	return &sessionOutput{Body: api.FromSession(sess)}, nil
}

func (s *Server) deleteSession(ctx context.Context, in *sessionIDInput) (*struct{}, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := s.ownSession(ctx, c, in.ID); err != nil {
		return nil, err
	}
	live, err := s.cfg.Ledger.ListRuns(ctx, session.RunFilter{SessionID: in.ID, Statuses: []session.RunStatus{session.RunQueued, session.RunRunning}, Limit: 1})
	if err != nil {
		return nil, s.fail(ctx, "deleting the session", err)
	}
	if len(live) > 0 {
		r := live[0]
		return nil, huma.Error409Conflict(fmt.Sprintf("session %s has a %s run: cancel run %s first (POST /runs/%s/cancel), then delete the session", in.ID, r.Status, r.ID, r.ID))
	}
	if err := s.stopJobs(ctx, in.ID); err != nil {
		return nil, err
	}
	if err := s.cfg.Sessions.Delete(ctx, in.ID); err != nil {
		return nil, s.fail(ctx, "deleting the session", err)
	}
	// The session is gone; its stored events are only replay data for SSE
	// clients, so failing to drop them is logged, not reported.
	if err := s.cfg.Ledger.DeleteEvents(context.WithoutCancel(ctx), in.ID); err != nil {
		s.log.WarnContext(ctx, "deleting a session's stored events failed", "session_id", in.ID, "err", err)
	}
	s.sessionChanged(in.ID)
	return nil, nil
}

func (s *Server) forkSession(ctx context.Context, in *forkInput) (*sessionOutput, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	parent, err := s.ownSession(ctx, c, in.ID)
	if err != nil {
		return nil, err
	}
	var at int64
	if in.Body != nil {
		at = in.Body.AtSeq
	}
	child, err := s.cfg.Sessions.Fork(ctx, in.ID, at)
	if err != nil {
		return nil, s.fail(ctx, "forking the session", err)
	}
	if child.Caller != parent.Caller || child.Workspace != parent.Workspace || child.WorkDir != parent.WorkDir {
		// The store's fork keeps the log; the owner and workspace are the
		// server's to copy.
		child.Caller, child.Workspace, child.WorkDir = parent.Caller, parent.Workspace, parent.WorkDir
		if err := s.cfg.Sessions.Update(ctx, child); err != nil {
			if derr := s.cfg.Sessions.Delete(context.WithoutCancel(ctx), child.ID); derr != nil {
				s.log.WarnContext(ctx, "removing a half-made fork failed", "session_id", child.ID, "err", derr)
			}
			return nil, s.fail(ctx, "forking the session", err)
		}
	}
	s.sessionChanged(child.ID)
	return &sessionOutput{Body: api.FromSession(child)}, nil
}

// sessionChanged tells Config.OnSessionChange, when set.
func (s *Server) sessionChanged(id string) {
	if s.cfg.OnSessionChange != nil {
		s.cfg.OnSessionChange(id)
	}
}

// ownSession returns the caller's session id; another caller's is not
// found, exactly like an unknown one.
func (s *Server) ownSession(ctx context.Context, caller, id string) (*session.Session, error) {
	sess, err := s.cfg.Sessions.Get(ctx, id)
	if errors.Is(err, session.ErrNotFound) || errors.Is(err, session.ErrInvalid) || err == nil && sess.Caller != caller {
		return nil, notFound("session", id, "GET /sessions lists yours")
	}
	if err != nil {
		return nil, s.fail(ctx, "reading the session", err)
	}
	return sess, nil
}
