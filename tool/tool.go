package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/llm"
)

// Tool is something the model can call.
type Tool interface {
	// Spec describes the tool to the model. It must return the same bytes
	// every time, so the prompt-cache prefix stays stable (SPEC PROV-6).
	Spec() llm.ToolSpec
	// Run executes one call whose input has already been validated against
	// Spec().InputSchema. It returns err == nil whenever the model got a
	// Result, failures included (Result.IsError). A non-nil err is a failure
	// of the tool itself: the run loop reports it to the model as an error
	// result and the run goes on (SPEC LOOP-7).
	// Run must return promptly once ctx is done.
	Run(ctx context.Context, call Call) (Result, error)
}

// Call is one invocation of a tool.
type Call struct {
	// ID is the model's id for this call; the result answers it.
	ID string
	// Name is the tool's name as the model wrote it.
	Name string
	// Input is the call's JSON input object.
	Input json.RawMessage
	// SessionID and RunID identify the conversation and the run.
	SessionID, RunID string
	// WorkDir is the workspace directory the call runs in.
	WorkDir string
	// SessionDir is a directory private to the session, where tools may keep
	// files (the full output of a long command, say). Empty when there is none.
	SessionDir string
	// Depth is how deep in a tree of agents the calling agent runs: 0 for
	// the top run, 1 for its sub-agents (SPEC AGENT-4). A tool that starts
	// rein again passes it on (runner.DepthEnv), so the limit holds across
	// processes.
	Depth int
}

// Result is what a tool gives back to the model.
type Result struct {
	// Content holds *llm.Text and *llm.Image blocks.
	Content []llm.Block
	// IsError marks a failure the model should know about.
	IsError bool
	// Metadata is for the front end and the audit log, never sent to the
	// model: exit codes, paths, counts. It must marshal to JSON.
	Metadata map[string]any
}

// Text returns a successful result holding text.
func Text(text string) Result {
	return Result{Content: []llm.Block{&llm.Text{Text: text}}}
}

// Errorf returns a failed result whose text is formatted like fmt.Sprintf.
func Errorf(format string, args ...any) Result {
	return Result{Content: []llm.Block{&llm.Text{Text: fmt.Sprintf(format, args...)}}, IsError: true}
}

// TextOf returns the result's text blocks joined by newlines.
func (r Result) TextOf() string {
	return llm.Message{Content: r.Content}.TextOf()
}

// Meta says how a tool behaves, for scheduling and permissions (SPEC TOOL-1).
type Meta struct {
	// ReadOnly tools change nothing outside the conversation.
	ReadOnly bool
	// Destructive tools may delete or overwrite data that cannot be recovered.
	Destructive bool
	// ConcurrencySafe tools may run in parallel with other such tools
	// (SPEC LOOP-6).
	ConcurrencySafe bool
	// Category groups tools for permission modes: CategoryRead, CategoryEdit,
	// CategoryExecute, CategoryNetwork, CategorySession or CategoryOther.
	Category Category
}

// Category groups tools for permission modes (SPEC PERM-1).
type Category string

// The categories of tool.
const (
	CategoryRead    Category = "read"    // reads files or state; runs in every mode
	CategoryEdit    Category = "edit"    // changes files in the workspace
	CategoryExecute Category = "execute" // runs commands
	CategoryNetwork Category = "network" // reaches the network
	CategoryOther   Category = "other"   // anything else; asks in default mode
	// CategorySession tools have no effect outside the session: they keep
	// conversation state (a todo list) or talk to whoever drives the run
	// (ask_user). They run in every mode but strict, read-only included, and
	// should set ReadOnly too.
	CategorySession Category = "session"
)

// SessionOnly reports a tool declared to have no effect outside the
// session (CategorySession).
func (m Meta) SessionOnly() bool { return m.Category == CategorySession }

// MetaTool is implemented by tools that describe their behaviour. A tool that
// does not is treated as mutating, not concurrency-safe, category other.
type MetaTool interface {
	Tool
	Meta() Meta
}

// MetaOf returns t's Meta, or the conservative default.
func MetaOf(t Tool) Meta {
	if m, ok := t.(MetaTool); ok {
		return m.Meta()
	}
	return Meta{Category: CategoryOther}
}
