package session

import (
	"errors"

	"github.com/reinhq/rein/llm"
)

// Submission is a message a caller posts to a session: the run it sets
// off, with per-run overrides. Every front that starts runs (the server,
// the gateway) hands one to the runner's service, which stores it as a
// queued [Run]: Text becomes the run's prompt and the overrides its
// Options, as this struct's JSON.
type Submission struct {
	SessionID string `json:"-"`
	Caller    string `json:"-"`
	// Text is the user message; empty (with no images) continues a
	// pending conversation.
	Text string `json:"-"`
	// Images go with Text in the user message (SPEC LOOP-2), checked by
	// the front (package attachment). They are stored with the queued run
	// ([Run.Images]), never in its Options.
	Images []llm.Image `json:"-"`
	// Model, MaxTurns and PermissionMode override the configuration for
	// this run when set.
	Model          string `json:"model,omitempty"`
	MaxTurns       int    `json:"max_turns,omitempty"`
	PermissionMode string `json:"permission_mode,omitempty"`
	// Agent names the agent definition the run uses (AGENT-1); an unknown
	// one fails the run with a message listing the agents.
	Agent string `json:"agent,omitempty"`
	// TraceParent is the W3C traceparent header of the request that posted
	// the message, checked by the front: the run's trace joins the
	// caller's (SPEC OBS-3).
	TraceParent string `json:"traceparent,omitempty"`
}

// ErrShuttingDown is what a runtime returns while it takes no new runs (it
// is shutting down); the same submission may succeed on another process
// or after a restart.
var ErrShuttingDown = errors.New("shutting down; no new runs are accepted")
