package acp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
)

// acpAgent implements the ACP agent's methods over the runner.
type acpAgent struct {
	cfg  Config
	conn *sdk.AgentSideConnection

	mu       sync.Mutex
	sessions map[string]*live
	// client is what the client said it can do (initialize).
	client sdk.ClientCapabilities
}

// live is one open session: its workspace, conversation and the prompt
// running in it.
type live struct {
	id   string
	ws   *Workspace
	conv *runner.Conversation
	// run is held by the prompt running; a second prompt is refused.
	run sync.Mutex
	// mu guards cancel, the running prompt's.
	mu     sync.Mutex
	cancel context.CancelFunc
}

var (
	_ sdk.Agent       = (*acpAgent)(nil)
	_ sdk.AgentLoader = (*acpAgent)(nil)
)

func newAgent(cfg Config) *acpAgent {
	return &acpAgent{cfg: cfg, sessions: map[string]*live{}}
}

// Initialize answers the capabilities rein has: loading with full replay,
// images and embedded context in prompts, listing, resuming and closing
// sessions. The protocol version is the one this SDK speaks; a client
// asking for another gets it, and decides.
func (a *acpAgent) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	a.mu.Lock()
	a.client = p.ClientCapabilities
	a.mu.Unlock()
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentInfo:       &sdk.Implementation{Name: "rein", Title: sdk.Ptr("rein"), Version: a.cfg.Version},
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{Image: true, EmbeddedContext: true},
			// Stdio servers every agent takes; HTTP and SSE too (clientMCP).
			McpCapabilities: sdk.McpCapabilities{Http: true, Sse: true},
			SessionCapabilities: sdk.SessionCapabilities{
				List: &sdk.SessionListCapabilities{}, Resume: &sdk.SessionResumeCapabilities{},
				Close: &sdk.SessionCloseCapabilities{},
			},
		},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// Authenticate is not needed: rein reads provider keys from its own
// configuration; no method is offered.
func (a *acpAgent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, sdk.NewInvalidRequest("rein offers no authentication methods; set the provider's key in its environment or configuration (rein provider list)")
}

// NewSession opens the workspace of cwd and creates a stored session in it.
func (a *acpAgent) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	ws, err := a.open(ctx, p.Cwd, p.AdditionalDirectories)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	s, err := ws.Setup.WithModel(ws.Setup.ModelSpec(nil))
	if err != nil {
		ws.Close()
		return sdk.NewSessionResponse{}, sdk.NewInternalError(err.Error())
	}
	if err := clientMCP(s, p.McpServers); err != nil {
		ws.Close()
		return sdk.NewSessionResponse{}, err
	}
	conv := s.NewConversation()
	files := a.useEditorFiles(conv, "")
	if err := conv.Create(ctx, &session.Session{}); err != nil {
		conv.Close()
		ws.Close()
		return sdk.NewSessionResponse{}, sdk.NewInternalError(err.Error())
	}
	if files != nil {
		files.sessionID = conv.SessionID()
	}
	l := a.add(conv, ws)
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(l.id), Modes: modeState(s.Policy()), ConfigOptions: configOptions(conv)}, nil
}

// LoadSession binds a stored session and replays its whole conversation
// as updates before it answers (SPEC SESS-3).
func (a *acpAgent) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	l, err := a.resume(ctx, string(p.SessionId), p.Cwd, p.AdditionalDirectories, p.McpServers)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	if err := a.replay(ctx, l); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	return sdk.LoadSessionResponse{Modes: modeState(l.conv.Setup().Policy()), ConfigOptions: configOptions(l.conv)}, nil
}

// ResumeSession binds a stored session without replaying it.
func (a *acpAgent) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	l, err := a.resume(ctx, string(p.SessionId), p.Cwd, p.AdditionalDirectories, p.McpServers)
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	return sdk.ResumeSessionResponse{Modes: modeState(l.conv.Setup().Policy()), ConfigOptions: configOptions(l.conv)}, nil
}

// resume opens the workspace of cwd and binds stored session id in it,
// with the client's MCP servers.
func (a *acpAgent) resume(ctx context.Context, id, cwd string, extra []string, servers []sdk.McpServer) (*live, error) {
	if err := session.ValidID(id); err != nil {
		return nil, sdk.NewInvalidParams(fmt.Sprintf("sessionId: %v", err))
	}
	if l := a.get(id); l != nil {
		return nil, sdk.NewInvalidRequest(fmt.Sprintf("session %s is already open on this connection", id))
	}
	ws, err := a.open(ctx, cwd, extra)
	if err != nil {
		return nil, err
	}
	sess, err := ws.Store.Get(ctx, id)
	if err != nil {
		ws.Close()
		if errors.Is(err, session.ErrNotFound) {
			return nil, sdk.NewInvalidParams(fmt.Sprintf("no session %s in %s; session/list shows the workspace's sessions", id, cwd))
		}
		return nil, sdk.NewInternalError(err.Error())
	}
	if root := ws.Setup.Workspace().Root; sess.WorkDir != root {
		ws.Close()
		return nil, sdk.NewInvalidParams(fmt.Sprintf("session %s belongs to %s, not %s; load it with that cwd", id, sess.WorkDir, root))
	}
	s, err := ws.Setup.WithModel(ws.Setup.ModelSpec(sess))
	if err != nil {
		ws.Close()
		return nil, sdk.NewInternalError(err.Error())
	}
	if err := clientMCP(s, servers); err != nil {
		ws.Close()
		return nil, err
	}
	conv := s.NewConversation()
	a.useEditorFiles(conv, id)
	st, err := conv.Resume(ctx, id)
	if err == nil {
		err = conv.Resumed(ctx, st)
	}
	if err != nil {
		conv.Close()
		ws.Close()
		if errors.Is(err, session.ErrLocked) {
			return nil, sdk.NewInvalidRequest(fmt.Sprintf("session %s is open in another rein; close it there first", id))
		}
		return nil, sdk.NewInternalError(err.Error())
	}
	return a.add(conv, ws), nil
}

// ListSessions lists the stored sessions of cwd, newest first, a page at a
// time.
func (a *acpAgent) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	if p.Cwd == nil {
		return sdk.ListSessionsResponse{}, sdk.NewInvalidParams("cwd is required: rein lists the sessions of one workspace")
	}
	ws, err := a.open(ctx, *p.Cwd, p.AdditionalDirectories)
	if err != nil {
		return sdk.ListSessionsResponse{}, err
	}
	defer ws.Close()
	opts := session.ListOptions{WorkDir: ws.Setup.Workspace().Root}
	if p.Cursor != nil {
		opts.Cursor = *p.Cursor
	}
	page, next, err := ws.Store.List(ctx, opts)
	if err != nil {
		return sdk.ListSessionsResponse{}, sdk.NewInvalidParams(err.Error())
	}
	out := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	for _, s := range page {
		info := sdk.SessionInfo{SessionId: sdk.SessionId(s.ID), Cwd: s.WorkDir,
			UpdatedAt: sdk.Ptr(s.UpdatedAt.UTC().Format(time.RFC3339))}
		if t := s.Title; t != "" {
			info.Title = &t
		} else if s.Preview != "" {
			info.Title = sdk.Ptr(s.Preview)
		}
		out.Sessions = append(out.Sessions, info)
	}
	if next != "" {
		out.NextCursor = &next
	}
	return out, nil
}

// CloseSession cancels the session's prompt, if any, and releases it.
func (a *acpAgent) CloseSession(_ context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	a.mu.Lock()
	l := a.sessions[string(p.SessionId)]
	delete(a.sessions, string(p.SessionId))
	a.mu.Unlock()
	if l == nil {
		return sdk.CloseSessionResponse{}, unknownSession(string(p.SessionId))
	}
	l.close()
	return sdk.CloseSessionResponse{}, nil
}

// Cancel stops the prompt running in the session; the prompt answers with
// the stop reason cancelled once its updates are sent.
func (a *acpAgent) Cancel(_ context.Context, p sdk.CancelNotification) error {
	if l := a.get(string(p.SessionId)); l != nil {
		l.stop()
	}
	return nil
}

// SetSessionMode switches the session's permission mode for the calls
// decided from now on.
func (a *acpAgent) SetSessionMode(_ context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	l := a.get(string(p.SessionId))
	if l == nil {
		return sdk.SetSessionModeResponse{}, unknownSession(string(p.SessionId))
	}
	m, ok := modeByID(p.ModeId)
	if !ok {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams(fmt.Sprintf("unknown mode %q; the modes are %s", p.ModeId, modeList()))
	}
	if err := l.conv.Setup().Policy().SetMode(m); err != nil {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams(err.Error())
	}
	return sdk.SetSessionModeResponse{}, nil
}

// open checks cwd and opens its workspace.
func (a *acpAgent) open(ctx context.Context, cwd string, extra []string) (*Workspace, error) {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return nil, sdk.NewInvalidParams(fmt.Sprintf("cwd %q: give the workspace's absolute path", cwd))
	}
	if len(extra) > 0 {
		return nil, sdk.NewInvalidParams("additionalDirectories: rein works in one directory per session and does not offer additional directories")
	}
	ws, err := a.cfg.Open(ctx, filepath.Clean(cwd))
	if err != nil {
		return nil, sdk.NewInvalidParams(fmt.Sprintf("cwd %s: %v", cwd, err))
	}
	return ws, nil
}

// add keeps an open session.
func (a *acpAgent) add(conv *runner.Conversation, ws *Workspace) *live {
	l := &live{id: conv.SessionID(), ws: ws, conv: conv}
	a.mu.Lock()
	a.sessions[l.id] = l
	a.mu.Unlock()
	return l
}

// get returns the open session id, nil when none is.
func (a *acpAgent) get(id string) *live {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// closeAll closes every open session (the connection ended).
func (a *acpAgent) closeAll() {
	a.mu.Lock()
	all := a.sessions
	a.sessions = map[string]*live{}
	a.mu.Unlock()
	for _, l := range all {
		l.close()
	}
}

// stop cancels the running prompt, if any.
func (l *live) stop() {
	l.mu.Lock()
	if l.cancel != nil {
		l.cancel()
	}
	l.mu.Unlock()
}

// close stops the running prompt, waits for it, and releases the session
// and its workspace.
func (l *live) close() {
	l.stop()
	l.run.Lock()
	defer l.run.Unlock()
	l.conv.Close()
	l.ws.Close()
}

// unknownSession is the error for a session id not open here.
func unknownSession(id string) error {
	return sdk.NewInvalidParams(fmt.Sprintf("no open session %q; session/new or session/load opens one", id))
}

// mode returns the session's current permission mode.
func (l *live) mode() permission.Mode { return l.conv.Setup().Policy().Mode() }
