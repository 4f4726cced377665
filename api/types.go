package api

import (
	"encoding/json"
	"time"

	"github.com/reinhq/rein/llm"
)

// Health is the body of GET /health.
type Health struct {
	Status  string `json:"status" enum:"ok" doc:"Always ok when the server answers."`
	Version string `json:"version" doc:"The server's version."`
}

// Ready is the answer of GET /ready when every dependency answers.
type Ready struct {
	Status string `json:"status" enum:"ready" doc:"ready: every dependency answered."`
	// Checks names each dependency checked and its state.
	Checks map[string]string `json:"checks" doc:"Each dependency checked (store, bus) and ok."`
	// Commands says how the runs' commands run here (SPEC API-9).
	Commands string `json:"commands,omitempty" enum:"confined,refused,unconfined,unconfined-loopback" doc:"How runs' commands (bash, actions) run in this process: confined (a sandbox showing only the workspace and the system's directories), refused (no such sandbox here: remote callers' commands are refused), unconfined (no such sandbox; the operator allowed them with --allow-unconfined-commands), unconfined-loopback (no such sandbox; only the operator calls). Absent where no runs run."`
}

// The kinds of workspace (SPEC WS-2).
const (
	KindProject = "project" // a directory, tools and an execution backend
	KindChat    = "chat"    // a prompt, an agent and a model only
)

// CreateWorkspace is the body of POST /workspaces.
type CreateWorkspace struct {
	Kind string `json:"kind" enum:"project,chat" doc:"project: a directory with tools and execution; chat: a model and a prompt only."`
	Dir  string `json:"dir,omitempty" maxLength:"4096" doc:"Absolute directory of a project workspace; it must lie under one of the server's roots (rein serve --root DIR). Not allowed for chat."`
	Name string `json:"name,omitempty" maxLength:"200" doc:"Optional display name."`
}

// Workspace is a workspace a caller opened.
type Workspace struct {
	ID   string `json:"id"`
	Kind string `json:"kind" enum:"project,chat"`
	// Dir is the resolved directory (symbolic links followed); empty for chat.
	Dir       string    `json:"dir,omitempty"`
	Name      string    `json:"name,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// WorkspaceList is the body of GET /workspaces, newest first.
type WorkspaceList struct {
	Items []Workspace `json:"items"`
}

// CreateSession is the body of POST /sessions.
type CreateSession struct {
	WorkspaceID    string `json:"workspace_id" minLength:"1" maxLength:"128" doc:"The workspace the session works in (POST /workspaces)."`
	Title          string `json:"title,omitempty" maxLength:"200" doc:"Optional title."`
	PermissionMode string `json:"permission_mode,omitempty" enum:",strict,default,accept-edits,read-only,plan" doc:"The session's permission mode: every run of the session uses it unless its message names one; empty keeps the server's configuration. plan (SPEC PERM-7): runs read and plan; a plan approved in a run (its permission_request answered once or always) switches the session to default or accept-edits. bypass is not a session mode: a message may ask for it where the server allows it."`
}

// UpdateSession is the body of PATCH /sessions/{id}: the fields given
// change, the others stay.
type UpdateSession struct {
	Title          *string `json:"title,omitempty" maxLength:"200" doc:"A new title; empty clears it."`
	PermissionMode *string `json:"permission_mode,omitempty" enum:",strict,default,accept-edits,read-only,plan" doc:"The session's permission mode: every run of the session uses it unless its message names one; empty keeps the server's configuration. plan (SPEC PERM-7): runs read and plan; a plan approved in a run (its permission_request answered once or always) switches the session to default or accept-edits. bypass is not a session mode: a message may ask for it where the server allows it. Approving a plan a run stopped at (plan_ready): set default or accept-edits here, then send a message (The plan is approved: carry it out.). Applies from the next run on; empty returns to the server's configuration."`
}

// Session is a conversation's metadata.
type Session struct {
	ID          string    `json:"id"`
	WorkspaceID string    `json:"workspace_id"`
	Title       string    `json:"title,omitempty"`
	Preview     string    `json:"preview,omitempty" doc:"The first user message, cut to about 100 characters."`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	ParentID    string    `json:"parent_id,omitempty" doc:"The session this one was forked from."`
	ForkSeq     int64     `json:"fork_seq,omitempty" doc:"The last entry of the parent the fork copied."`
	Model       string    `json:"model,omitempty" doc:"The model of the newest run."`
	Usage       llm.Usage `json:"usage" doc:"Tokens of every run of the session."`
	CostUSD     float64   `json:"cost_usd,omitempty"`
	Runs        int       `json:"runs,omitempty" doc:"How many runs ended."`
	// PermissionMode is the session's own mode (PERM-7).
	PermissionMode string `json:"permission_mode,omitempty" doc:"The session's permission mode (see PATCH /sessions/{id}); absent: the server's configuration."`
}

// SessionList is a page of GET /sessions, newest first.
type SessionList struct {
	Items []Session `json:"items"`
	// NextCursor continues the listing (?cursor=); empty on the last page.
	NextCursor string `json:"next_cursor"`
}

// Fork is the body of POST /sessions/{id}/fork.
type Fork struct {
	AtSeq int64 `json:"at_seq,omitempty" minimum:"0" doc:"Copy the entries up to this seq (moved so no tool call is cut from its results); 0 copies everything."`
}

// Message is the body of POST /sessions/{id}/messages: a user message, which
// starts a run.
type Message struct {
	Text           string  `json:"text" doc:"The user message; empty continues a pending conversation."`
	Model          string  `json:"model,omitempty" maxLength:"200" doc:"Model for this run; empty keeps the session's or the server's."`
	MaxTurns       int     `json:"max_turns,omitempty" minimum:"0" maximum:"10000" doc:"Model calls allowed; 0 keeps the default."`
	PermissionMode string  `json:"permission_mode,omitempty" enum:",strict,default,accept-edits,read-only,plan,bypass" doc:"Permission mode for this run; empty keeps the default. plan: read-only exploration ending with a plan to approve (SPEC PERM-7): the plan arrives as a plan event with a permission_request to answer."`
	Agent          string  `json:"agent,omitempty" maxLength:"64" pattern:"^[A-Za-z0-9_-]*$" doc:"Agent definition to run as (rein agents list); empty runs rein's own."`
	Images         []Image `json:"images,omitempty" maxItems:"20" doc:"Images that go with the text in the user message (at most 20, 5 MiB each and 20 MiB in all, decoded). A model without vision gets a note in their place."`
}

// Image is an image in a message. Its type is read from its bytes: PNG,
// JPEG, GIF and WebP are accepted; a declared type that differs is refused.
type Image struct {
	MediaType string `json:"media_type,omitempty" maxLength:"100" doc:"image/png, image/jpeg, image/gif or image/webp; optional, but when given it must be what the bytes are (else 422). Another type is 415."`
	Data      string `json:"data" doc:"The image: standard base64 (padding optional), or a data URL (data:image/png;base64,…). Over 5 MiB decoded is 413; bytes that are no accepted image are 415; bad base64 is 422."`
}

// Accepted is the answer to a message: the queued run (202).
type Accepted struct {
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id"`
	Status    string `json:"status" doc:"queued until a worker takes the run."`
}

// Run is one message's run and its state.
type Run struct {
	ID        string    `json:"id"`
	SessionID string    `json:"session_id"`
	Status    string    `json:"status" enum:"queued,running,completed,failed,cancelled,interrupted"`
	Prompt    string    `json:"prompt,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	Reason    string    `json:"reason,omitempty" doc:"Why the run ended (completed, max_turns, cancelled, error, …)."`
	Error     string    `json:"error,omitempty"`
	Turns     int       `json:"turns,omitempty"`
	Usage     llm.Usage `json:"usage,omitzero"`
	CostUSD   float64   `json:"cost_usd,omitempty"`
}

// RunList is the body of GET /sessions/{id}/runs, oldest first.
type RunList struct {
	Items []Run `json:"items"`
}

// PermissionAnswer is the body of POST /runs/{id}/permissions/{call_id}: the
// answer to a permission_request event (SPEC PERM-3).
type PermissionAnswer struct {
	Answer  string `json:"answer" enum:"once,always,deny" doc:"once: run this call; always: run it and keep a rule; deny: do not run it. For a plan (exit_plan_mode, see the plan event): once approves it into default mode, always into accept-edits (no rule is kept), deny sends it back."`
	Message string `json:"message,omitempty" maxLength:"2000" doc:"With deny: what the model is told instead; for a plan, the user's feedback."`
}

// AuditRecord is one record of the audit trail (SPEC API-7).
type AuditRecord struct {
	ID        int64           `json:"id"`
	Time      time.Time       `json:"time"`
	SessionID string          `json:"session_id,omitempty"`
	RunID     string          `json:"run_id,omitempty"`
	Kind      string          `json:"kind" enum:"run,tool_call,permission,hook"`
	Data      json.RawMessage `json:"data" doc:"The record itself (a JSON object, redacted)."`
}

// AuditList is the body of GET /audit, by id ascending.
type AuditList struct {
	Items []AuditRecord `json:"items"`
}
