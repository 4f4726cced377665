package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/reinhq/rein/api"
)

// Health asks GET /health; it needs no credentials.
func (c *Client) Health(ctx context.Context) (*api.Health, error) {
	return call[api.Health](ctx, c, http.MethodGet, "/health", nil, nil)
}

// CreateWorkspace opens a workspace: POST /workspaces.
func (c *Client) CreateWorkspace(ctx context.Context, in api.CreateWorkspace) (*api.Workspace, error) {
	return call[api.Workspace](ctx, c, http.MethodPost, "/workspaces", nil, in)
}

// Workspaces lists the caller's workspaces, newest first: GET /workspaces.
func (c *Client) Workspaces(ctx context.Context) ([]api.Workspace, error) {
	out, err := call[api.WorkspaceList](ctx, c, http.MethodGet, "/workspaces", nil, nil)
	if err != nil {
		return nil, err
	}
	return out.Items, nil
}

// Workspace returns one workspace: GET /workspaces/{id}.
func (c *Client) Workspace(ctx context.Context, id string) (*api.Workspace, error) {
	p, err := seg("workspace", id)
	if err != nil {
		return nil, err
	}
	return call[api.Workspace](ctx, c, http.MethodGet, "/workspaces/"+p, nil, nil)
}

// CreateSession starts a session in a workspace: POST /sessions.
func (c *Client) CreateSession(ctx context.Context, in api.CreateSession) (*api.Session, error) {
	return call[api.Session](ctx, c, http.MethodPost, "/sessions", nil, in)
}

// UpdateSession changes the fields of in that are set (PATCH
// /sessions/{id}): the title, the session's permission mode (SPEC PERM-7).
func (c *Client) UpdateSession(ctx context.Context, id string, in api.UpdateSession) (*api.Session, error) {
	p, err := seg("session", id)
	if err != nil {
		return nil, err
	}
	return call[api.Session](ctx, c, http.MethodPatch, "/sessions/"+p, nil, in)
}

// SessionQuery selects a page of [Client.Sessions]; the zero value is the
// server's first page of every session of the caller.
type SessionQuery struct {
	// WorkspaceID keeps the sessions of one workspace.
	WorkspaceID string
	// Limit is the page size; 0 is the server's default.
	Limit int
	// Cursor continues a listing: the NextCursor of the previous page.
	Cursor string
}

// Sessions lists the caller's sessions, newest first, a page at a time:
// GET /sessions. The page's NextCursor is "" on the last one.
func (c *Client) Sessions(ctx context.Context, q SessionQuery) (*api.SessionList, error) {
	v := url.Values{}
	set(v, "workspace_id", q.WorkspaceID)
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	set(v, "cursor", q.Cursor)
	return call[api.SessionList](ctx, c, http.MethodGet, "/sessions", v, nil)
}

// Session returns one session: GET /sessions/{id}.
func (c *Client) Session(ctx context.Context, id string) (*api.Session, error) {
	p, err := seg("session", id)
	if err != nil {
		return nil, err
	}
	return call[api.Session](ctx, c, http.MethodGet, "/sessions/"+p, nil, nil)
}

// DeleteSession deletes a session: DELETE /sessions/{id}. A session with a
// run queued or running is a conflict ([ErrConflict]): cancel the run
// first.
func (c *Client) DeleteSession(ctx context.Context, id string) error {
	p, err := seg("session", id)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, "/sessions/"+p, nil, nil, nil)
}

// Fork copies a session, up to in.AtSeq (0: all of it), into a new one:
// POST /sessions/{id}/fork.
func (c *Client) Fork(ctx context.Context, id string, in api.Fork) (*api.Session, error) {
	p, err := seg("session", id)
	if err != nil {
		return nil, err
	}
	return call[api.Session](ctx, c, http.MethodPost, "/sessions/"+p+"/fork", nil, in)
}

// Export formats of [Client.Export].
const (
	ExportJSONL    = "jsonl"    // the session's entries, one JSON object a line
	ExportMarkdown = "markdown" // a readable transcript
)

// Export writes a session in format ([ExportJSONL], [ExportMarkdown]; ""
// is the server's default, jsonl) to w, as the server streams it: GET
// /sessions/{id}/export.
func (c *Client) Export(ctx context.Context, id, format string, w io.Writer) error {
	p, err := seg("session", id)
	if err != nil {
		return err
	}
	path := "/sessions/" + p + "/export"
	v := url.Values{}
	set(v, "format", format)
	req, err := c.newRequest(ctx, http.MethodGet, path, v, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/x-ndjson, text/markdown, text/plain, application/problem+json")
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("client: GET %s: %w", req.URL.Path, err)
	}
	return nil
}

// Send posts a user message, which queues a run: POST
// /sessions/{id}/messages. The answer names the run; follow it with
// [Client.Events] or [Client.Wait].
func (c *Client) Send(ctx context.Context, sessionID string, msg api.Message) (*api.Accepted, error) {
	p, err := seg("session", sessionID)
	if err != nil {
		return nil, err
	}
	return call[api.Accepted](ctx, c, http.MethodPost, "/sessions/"+p+"/messages", nil, msg)
}

// Runs lists a session's runs, oldest first: GET /sessions/{id}/runs.
func (c *Client) Runs(ctx context.Context, sessionID string) ([]api.Run, error) {
	p, err := seg("session", sessionID)
	if err != nil {
		return nil, err
	}
	out, err := call[api.RunList](ctx, c, http.MethodGet, "/sessions/"+p+"/runs", nil, nil)
	if err != nil {
		return nil, err
	}
	return out.Items, nil
}

// Run returns one run: GET /runs/{id}.
func (c *Client) Run(ctx context.Context, id string) (*api.Run, error) {
	p, err := seg("run", id)
	if err != nil {
		return nil, err
	}
	return call[api.Run](ctx, c, http.MethodGet, "/runs/"+p, nil, nil)
}

// Cancel cancels a queued or running run and returns it: POST
// /runs/{id}/cancel. A run already final is a conflict ([ErrConflict]).
func (c *Client) Cancel(ctx context.Context, id string) (*api.Run, error) {
	p, err := seg("run", id)
	if err != nil {
		return nil, err
	}
	return call[api.Run](ctx, c, http.MethodPost, "/runs/"+p+"/cancel", nil, nil)
}

// Answer answers a permission_request event of a run: POST
// /runs/{id}/permissions/{call_id}. No question pending for callID is
// [ErrNotFound].
func (c *Client) Answer(ctx context.Context, runID, callID string, a api.PermissionAnswer) error {
	return c.answerCall(ctx, runID, "permissions", callID, a)
}

// AnswerQuestion answers a question event of a run (the model's
// ask_user): POST /runs/{id}/questions/{call_id}. No question pending for
// callID is [ErrNotFound].
func (c *Client) AnswerQuestion(ctx context.Context, runID, callID string, answer api.QuestionAnswer) error {
	return c.answerCall(ctx, runID, "questions", callID, answer)
}

// answerCall posts body to POST /runs/{runID}/{kind}/{callID}: the answer
// to a question a run's tool call waits on.
func (c *Client) answerCall(ctx context.Context, runID, kind, callID string, body any) error {
	p, err := seg("run", runID)
	if err != nil {
		return err
	}
	cp, err := seg("tool call", callID)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, "/runs/"+p+"/"+kind+"/"+cp, nil, body, nil)
}

// AuditQuery selects records of [Client.Audit]; zero fields do not filter.
type AuditQuery struct {
	SessionID, RunID string
	// Kind is run, tool_call, permission or hook.
	Kind string
	// Since and Until bound the records' times.
	Since, Until time.Time
	// AfterID continues a listing: the ID of the last record seen.
	AfterID int64
	// Limit is the page size; 0 is the server's default.
	Limit int
}

// Audit reads the caller's audit trail, by id ascending: GET /audit. Page
// through it with AfterID.
func (c *Client) Audit(ctx context.Context, q AuditQuery) ([]api.AuditRecord, error) {
	v := url.Values{}
	set(v, "session_id", q.SessionID)
	set(v, "run_id", q.RunID)
	set(v, "kind", q.Kind)
	if !q.Since.IsZero() {
		v.Set("since", q.Since.Format(time.RFC3339Nano))
	}
	if !q.Until.IsZero() {
		v.Set("until", q.Until.Format(time.RFC3339Nano))
	}
	if q.AfterID > 0 {
		v.Set("after_id", strconv.FormatInt(q.AfterID, 10))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	out, err := call[api.AuditList](ctx, c, http.MethodGet, "/audit", v, nil)
	if err != nil {
		return nil, err
	}
	return out.Items, nil
}

// set adds a query parameter when it has a value.
func set(v url.Values, key, value string) {
	if value != "" {
		v.Set(key, value)
	}
}

// call sends a request and decodes its JSON answer into a new T.
func call[T any](ctx context.Context, c *Client, method, path string, query url.Values, body any) (*T, error) {
	var out T
	if err := c.do(ctx, method, path, query, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
