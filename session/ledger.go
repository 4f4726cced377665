package session

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/reinhq/rein/llm"
)

// Ledger is what a server keeps beside the sessions' logs: the workspaces
// its callers opened (SPEC WS-2), the runs their messages set off with their
// state (API-3: a 202-acknowledged message is a queued run, durable before
// the answer), the log of durable events that SSE clients replay from
// (API-2), the audit trail (API-7) and the rules callers kept with
// "always" answers (API-9).
//
// Every method is safe for concurrent use. An unknown id is an error
// wrapping [ErrNotFound]; malformed input one wrapping [ErrInvalid]. Writes
// return once durable. Backends: session/sqlite (embedded), session/postgres
// (production), and [MemLedger] for tests; all pass sessiontest.RunLedger.
// UpdateRun, AppendEvents and AppendAudit are writes of their sessions,
// checked against the fencing token of the context by a ledger shared by
// several processes ([WithFence]).
type Ledger interface {
	// CreateWorkspace stores a new workspace. An empty ID is filled with
	// [NewID]; a zero CreatedAt is set to now. An id in use is [ErrExists].
	CreateWorkspace(ctx context.Context, w *Workspace) error
	// GetWorkspace returns the workspace.
	GetWorkspace(ctx context.Context, id string) (*Workspace, error)
	// ListWorkspaces returns the caller's workspaces, newest first.
	ListWorkspaces(ctx context.Context, caller string) ([]*Workspace, error)

	// CreateRun stores a new run. An empty ID is filled with [NewID], a zero
	// CreatedAt set to now, an empty Status set to [RunQueued]; Seq is
	// assigned: it increases with every run created in the ledger, so it
	// orders runs by submission. r is updated in place.
	CreateRun(ctx context.Context, r *Run) error
	// UpdateRun replaces the run's state (Status, StartedAt, EndedAt,
	// Reason, Error, Turns, Usage, CostUSD), keeping its identity, prompt,
	// options and Seq.
	UpdateRun(ctx context.Context, r *Run) error
	// GetRun returns the run.
	GetRun(ctx context.Context, id string) (*Run, error)
	// ListRuns returns the runs the filter selects, by Seq ascending.
	ListRuns(ctx context.Context, f RunFilter) ([]*Run, error)

	// AppendEvents stores durable events of the sessions' streams. Within a
	// session, IDs must increase: an event whose ID is not above the
	// session's last stored one is rejected with [ErrInvalid] and nothing of
	// the call is stored.
	AppendEvents(ctx context.Context, evs ...Event) error
	// Events returns up to limit (0: all) of the session's stored events
	// with ID > afterID, in ID order.
	Events(ctx context.Context, sessionID string, afterID int64, limit int) ([]Event, error)
	// LastEventID returns the ID of the session's newest stored event, 0
	// when it has none.
	LastEventID(ctx context.Context, sessionID string) (int64, error)
	// DeleteEvents drops the session's stored events and runs (the session
	// was deleted); its audit records stay.
	DeleteEvents(ctx context.Context, sessionID string) error

	// AppendAudit stores audit records; each gets the next ID.
	AppendAudit(ctx context.Context, recs ...AuditRecord) error
	// Audit returns the records the filter selects, by ID ascending.
	Audit(ctx context.Context, f AuditFilter) ([]AuditRecord, error)

	// CallerRules keeps the rules of callers' "always" answers (API-9).
	CallerRules
}

// ErrNoLedger is returned by front ends that need a ledger and were given a
// store without one.
var ErrNoLedger = errors.New("this store keeps no runs, events or audit records")

// WorkspaceKind says what a workspace may do (SPEC WS-2).
type WorkspaceKind string

// The kinds of workspace.
const (
	// WorkspaceProject has a directory, tools and an execution backend.
	WorkspaceProject WorkspaceKind = "project"
	// WorkspaceChat has a prompt, an agent and a model: no tools, no
	// execution, no directory.
	WorkspaceChat WorkspaceKind = "chat"
)

// Workspace is a workspace a caller opened on the server.
type Workspace struct {
	ID     string        `json:"id"`
	Caller string        `json:"caller"`
	Kind   WorkspaceKind `json:"kind"`
	// Dir is the absolute directory of a project workspace; empty for chat.
	Dir       string    `json:"dir,omitempty"`
	Name      string    `json:"name,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// RunStatus is where a run is in its life.
type RunStatus string

// The states of a run. Queued and running are live; the others are final.
const (
	RunQueued    RunStatus = "queued"
	RunRunning   RunStatus = "running"
	RunCompleted RunStatus = "completed" // ended with reason completed
	RunFailed    RunStatus = "failed"    // ended with another reason (Reason, Error say which)
	RunCancelled RunStatus = "cancelled" // cancelled, before or while it ran
	// RunInterrupted: the process running it died; its session was healed.
	RunInterrupted RunStatus = "interrupted"
)

// Final reports whether the run has ended.
func (s RunStatus) Final() bool { return s != RunQueued && s != RunRunning }

// Run is one user message's run (a POST to a session's messages) and its
// state.
type Run struct {
	ID        string    `json:"id"`
	SessionID string    `json:"session_id"`
	Caller    string    `json:"caller,omitempty"`
	Status    RunStatus `json:"status"`
	// Prompt is the user message; empty continues a pending conversation
	// (SPEC LOOP-9).
	Prompt string `json:"prompt,omitempty"`
	// Images go with Prompt in the user message. They are kept in the run
	// record from the 202 until the run ends with its user message stored
	// in the session log (which then holds them, like every block), so an
	// acknowledged message survives a crash whatever process takes the run
	// up; the run's end drops them from the record. The API's run views
	// leave them out.
	Images []llm.Image `json:"images,omitempty"`
	// Options are the run's overrides as submitted (model, max turns,
	// permission mode), JSON the runner reads.
	Options json.RawMessage `json:"options,omitempty"`
	// Seq orders runs by submission; CreateRun assigns it.
	Seq       int64     `json:"seq"`
	CreatedAt time.Time `json:"created_at"`
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	// Reason is the done reason (agent.Reason) of a run that ran.
	Reason  string    `json:"reason,omitempty"`
	Error   string    `json:"error,omitempty"`
	Turns   int       `json:"turns,omitempty"`
	Usage   llm.Usage `json:"usage,omitzero"`
	CostUSD float64   `json:"cost_usd,omitempty"`
}

// RunFilter selects runs for [Ledger.ListRuns]; zero fields select all.
type RunFilter struct {
	SessionID string
	Caller    string
	// Statuses keeps runs in any of these states.
	Statuses []RunStatus
	// AfterSeq keeps runs with Seq > AfterSeq (paging).
	AfterSeq int64
	// Limit caps the result; 0 or less means no cap.
	Limit int
}

// Event is a durable event of a session's stream, as SSE clients receive
// it: ID is its position in the session's stream, Data the event's JSON.
type Event struct {
	SessionID string          `json:"session_id"`
	ID        int64           `json:"id"`
	RunID     string          `json:"run_id,omitempty"`
	Type      string          `json:"type"`
	Time      time.Time       `json:"time"`
	Data      json.RawMessage `json:"data"`
}

// AuditKind says what an [AuditRecord] records (SPEC API-7, PERM-4).
type AuditKind string

// The kinds of audit record.
const (
	AuditRun        AuditKind = "run"        // a run ended: its record
	AuditToolCall   AuditKind = "tool_call"  // a tool call ended
	AuditPermission AuditKind = "permission" // a permission decision (permission.AuditRecord)
	AuditHook       AuditKind = "hook"       // a hook ran (hook.Record)
)

// AuditRecord is one record of the audit trail.
type AuditRecord struct {
	// ID orders the records; AppendAudit assigns it.
	ID        int64     `json:"id"`
	Time      time.Time `json:"time"`
	Caller    string    `json:"caller,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
	RunID     string    `json:"run_id,omitempty"`
	Kind      AuditKind `json:"kind"`
	// Data is the record itself, as JSON (redacted before it is stored).
	Data json.RawMessage `json:"data"`
}

// AuditFilter selects audit records; zero fields select all.
type AuditFilter struct {
	Caller    string
	SessionID string
	RunID     string
	Kind      AuditKind
	// Since and Until bound Time (Since inclusive, Until exclusive).
	Since, Until time.Time
	// AfterID keeps records with ID > AfterID (paging).
	AfterID int64
	// Limit caps the result; 0 or less means no cap.
	Limit int
}

// ErrConflict: the request conflicts with the current state (a run that
// already ended cannot be cancelled; a session with a live run cannot be
// deleted). The wrapping error says what to do instead.
var ErrConflict = errors.New("conflicts with the current state")
