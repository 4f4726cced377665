package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
)

// RunInput is the input of the run tool.
type RunInput struct {
	Prompt         string `json:"prompt" jsonschema:"the task or question for rein"`
	Workspace      string `json:"workspace,omitempty" jsonschema:"the directory to work in: the server's directory (the default) or one below it, relative to it or absolute"`
	Model          string `json:"model,omitempty" jsonschema:"the model, provider/model (default: the workspace's configuration)"`
	PermissionMode string `json:"permission_mode,omitempty" jsonschema:"default, accept-edits, plan or bypass (default: the workspace's configuration)"`
}

// ContinueInput is the input of the continue tool.
type ContinueInput struct {
	SessionID      string `json:"session_id" jsonschema:"the session to continue, as run or list_sessions gave it"`
	Prompt         string `json:"prompt" jsonschema:"the follow-up message"`
	PermissionMode string `json:"permission_mode,omitempty" jsonschema:"default, accept-edits, plan or bypass (default: the workspace's configuration)"`
}

// RunResult is what run and continue return.
type RunResult struct {
	SessionID  string    `json:"session_id" jsonschema:"the session; continue it with the continue tool"`
	Text       string    `json:"text" jsonschema:"rein's final answer"`
	StopReason string    `json:"stop_reason" jsonschema:"why the run ended: completed, max_turns, cancelled, error, permission_denied, …"`
	Error      string    `json:"error,omitempty" jsonschema:"what went wrong, when the run ended with an error"`
	Turns      int       `json:"turns" jsonschema:"model calls the run made"`
	CostUSD    float64   `json:"cost_usd" jsonschema:"the run's cost in US dollars (0 when the model's price is unknown)"`
	Usage      llm.Usage `json:"usage" jsonschema:"the run's tokens"`
}

// ListInput is the input of list_sessions.
type ListInput struct {
	Limit int `json:"limit,omitempty" jsonschema:"at most this many sessions, newest first (default 20, at most 200)"`
}

// SessionInfo is one session in a listing.
type SessionInfo struct {
	ID        string  `json:"id"`
	Workspace string  `json:"workspace"`
	Title     string  `json:"title,omitempty"`
	Preview   string  `json:"preview,omitempty"`
	Model     string  `json:"model,omitempty"`
	Runs      int     `json:"runs"`
	CostUSD   float64 `json:"cost_usd"`
	UpdatedAt string  `json:"updated_at"`
}

// ListResult is what list_sessions returns.
type ListResult struct {
	Sessions []SessionInfo `json:"sessions"`
}

// ReadInput is the input of read_session.
type ReadInput struct {
	SessionID string `json:"session_id" jsonschema:"the session to read"`
	MaxChars  int    `json:"max_chars,omitempty" jsonschema:"at most this many characters of the conversation, the newest kept (default 20000, at most 200000)"`
}

// ReadResult is what read_session returns.
type ReadResult struct {
	Session   SessionInfo `json:"session"`
	Messages  int         `json:"messages" jsonschema:"messages in the session"`
	Truncated bool        `json:"truncated" jsonschema:"set when older messages were left out to keep within max_chars"`
	Text      string      `json:"text" jsonschema:"the conversation as text, one block per message"`
}

// Limits of the listing and the reading.
const (
	defaultList, maxList         = 20, 200
	defaultReadChars, maxReadLen = 20_000, 200_000
)

// addTools registers rein's tools.
func (s *Server) addTools() {
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "run", Title: "Run a task with rein",
		Description: "Run a prompt with rein, a coding agent, in the workspace (the server's directory or one below it); returns its answer, the session id, turns and cost. Tool calls that need permission are asked through elicitation when the client supports it."},
		s.run)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "continue", Title: "Continue a rein session",
		Description: "Send a follow-up prompt to a stored rein session (its id from run or list_sessions); returns the answer like run."},
		s.continueSession)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "list_sessions", Title: "List rein sessions",
		Description: "List the stored rein sessions of the server's workspace and those below it, newest first.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		s.listSessions)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "read_session", Title: "Read a rein session",
		Description: "Read a stored rein session's conversation as text (the newest part, within max_chars).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		s.readSession)
}

// checkPrompt refuses an empty or oversized prompt.
func (s *Server) checkPrompt(p string) error {
	switch {
	case strings.TrimSpace(p) == "":
		return errors.New("prompt is empty: give the task for rein")
	case len(p) > s.cfg.MaxPrompt:
		return fmt.Errorf("prompt is %d bytes, more than the %d this server takes: shorten it, or put the material in a file in the workspace and name the file", len(p), s.cfg.MaxPrompt)
	}
	return nil
}

// listSessions lists the sessions in the root, newest first.
func (s *Server) listSessions(ctx context.Context, _ *mcp.CallToolRequest, in ListInput) (*mcp.CallToolResult, ListResult, error) {
	limit := in.Limit
	switch {
	case limit < 0:
		return nil, ListResult{}, fmt.Errorf("limit %d: give a positive number (at most %d), or none for %d", limit, maxList, defaultList)
	case limit == 0:
		limit = defaultList
	case limit > maxList:
		limit = maxList
	}
	out := ListResult{Sessions: []SessionInfo{}}
	cursor := ""
	for {
		page, next, err := s.cfg.Store.List(ctx, session.ListOptions{Cursor: cursor})
		if err != nil {
			return nil, ListResult{}, fmt.Errorf("listing sessions: %v", err)
		}
		for _, m := range page {
			if !s.inRoot(m.WorkDir) {
				continue
			}
			out.Sessions = append(out.Sessions, infoOf(m))
			if len(out.Sessions) == limit {
				return nil, out, nil
			}
		}
		if next == "" {
			return nil, out, nil
		}
		cursor = next
	}
}

// infoOf is a session's metadata as listed.
func infoOf(m *session.Session) SessionInfo {
	return SessionInfo{ID: m.ID, Workspace: m.WorkDir, Title: m.Title, Preview: m.Preview, Model: m.Model,
		Runs: m.Runs, CostUSD: m.CostUSD, UpdatedAt: m.UpdatedAt.UTC().Format("2006-01-02T15:04:05Z")}
}

// readSession returns a session's conversation as text, the newest part
// within the limit.
func (s *Server) readSession(ctx context.Context, _ *mcp.CallToolRequest, in ReadInput) (*mcp.CallToolResult, ReadResult, error) {
	limit := in.MaxChars
	switch {
	case limit < 0:
		return nil, ReadResult{}, fmt.Errorf("max_chars %d: give a positive number (at most %d), or none for %d", limit, maxReadLen, defaultReadChars)
	case limit == 0:
		limit = defaultReadChars
	case limit > maxReadLen:
		limit = maxReadLen
	}
	sess, err := s.session(ctx, in.SessionID)
	if err != nil {
		return nil, ReadResult{}, err
	}
	st, err := session.Load(ctx, s.cfg.Store, sess.ID)
	if err != nil {
		return nil, ReadResult{}, fmt.Errorf("session %s: %v", sess.ID, err)
	}
	out := ReadResult{Session: infoOf(st.Session), Messages: len(st.Messages)}
	var parts []string
	size := 0
	for i := len(st.Messages) - 1; i >= 0; i-- {
		p := messageText(st.Messages[i])
		if size+len(p) > limit {
			out.Truncated = true
			if size == 0 { // the newest message alone is too long: its end
				parts = append(parts, "…"+strings.ToValidUTF8(p[len(p)-limit:], ""))
			}
			break
		}
		size += len(p)
		parts = append(parts, p)
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	out.Text = strings.Join(parts, "")
	return nil, out, nil
}

// maxBlock bounds one tool input or result in a session's text.
const maxBlock = 2000

// messageText renders a message: its role, then its text, tool calls and
// tool results (each cut to maxBlock); images and thinking are named only.
func messageText(m llm.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n", m.Role)
	for _, blk := range m.Content {
		switch x := blk.(type) {
		case *llm.Text:
			b.WriteString(x.Text)
			b.WriteString("\n")
		case *llm.ToolUse:
			fmt.Fprintf(&b, "[tool call %s %s]\n", x.Name, clip(string(x.Input), maxBlock))
		case *llm.ToolResult:
			status := "result"
			if x.IsError {
				status = "error"
			}
			fmt.Fprintf(&b, "[tool %s: %s]\n", status, clip(llm.Message{Content: x.Content}.TextOf(), maxBlock))
		case *llm.Image:
			b.WriteString("[image]\n")
		case *llm.Thinking:
			b.WriteString("[thinking]\n")
		}
	}
	b.WriteString("\n")
	return b.String()
}
