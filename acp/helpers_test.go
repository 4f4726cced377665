package acp_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/acp"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/workspace"
)

// env is a workspace, a session store and a scripted model that ACP
// connections open sessions over.
type env struct {
	t     testing.TB
	work  string
	home  string
	store session.Store
	model *llmtest.Scripted
	vars  map[string]string
	// trusted, when set, trusts the workspace as it is when a session
	// opens (rein trust).
	trusted bool
	// reasons, when set, names the model specs whose model the registry
	// knows to reason (an Anthropic model: it takes a reasoning effort).
	reasons map[string]bool
}

func newEnv(t testing.TB, replies ...llmtest.Reply) *env {
	dir := t.TempDir()
	e := &env{t: t, work: filepath.Join(dir, "project"), home: filepath.Join(dir, "home"), store: session.NewMemStore(),
		model: llmtest.NewScripted(replies...)}
	for _, d := range []string{e.work, e.home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	e.vars = map[string]string{"HOME": e.home, "REIN_SANDBOX": "off", "REIN_MODEL": "scripted/demo",
		"XDG_CONFIG_HOME": filepath.Join(e.home, ".config"), "XDG_DATA_HOME": filepath.Join(e.home, ".local/share")}
	return e
}

// open is the Config.Open of the env: its workspace with the scripted
// model, sessions in its store.
func (e *env) open(_ context.Context, dir string) (*acp.Workspace, error) {
	getenv := func(k string) string { return e.vars[k] }
	loaded, err := workspace.Load(workspace.Options{WorkDir: dir, Getenv: getenv})
	if err != nil {
		return nil, err
	}
	if e.trusted && !loaded.Trust.Trusted {
		if err := loaded.TrustNow(time.Now()); err != nil {
			return nil, err
		}
		if loaded, err = workspace.Load(workspace.Options{WorkDir: dir, Getenv: getenv}); err != nil {
			return nil, err
		}
	}
	s, err := runner.NewSetup(runner.Config{Loaded: loaded, Store: e.store, SessionsDir: filepath.Join(e.home, "sessions"), Getenv: getenv,
		Resolve: func(_ *registry.Registry, spec string) (*runner.Model, error) {
			caps := registry.Model{Name: "demo", ContextWindow: 100_000, MaxOutput: 4_000, Vision: true}
			if e.reasons[spec] {
				caps.Provider, caps.Thinking = "anthropic", true
			}
			return &runner.Model{Provider: e.model, ProviderName: "scripted", Name: "demo", Label: spec, Caps: caps}, nil
		}})
	if err != nil {
		return nil, err
	}
	return &acp.Workspace{Setup: s, Store: e.store, Close: s.Close}, nil
}

// client is a test ACP client: it keeps every update and answers
// permission questions with answer.
type client struct {
	mu      sync.Mutex
	updates []sdk.SessionUpdate
	asked   []sdk.RequestPermissionRequest
	answer  func(sdk.RequestPermissionRequest) sdk.RequestPermissionResponse
	// onUpdate, when set, sees each update as it arrives.
	onUpdate func(sdk.SessionUpdate)
	// buffers, when set, are the editor's open files by path: the client
	// offers fs/read_text_file and fs/write_text_file (connectFS), reads
	// an open buffer or else the disk, and keeps what is written in a
	// buffer. fsCalls records each call, "read PATH" or "write PATH".
	buffers map[string]string
	fsCalls []string
}

func (c *client) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked = append(c.asked, p)
	answer := c.answer
	c.mu.Unlock()
	if answer == nil {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return answer(p), nil
}

func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n.Update)
	f := c.onUpdate
	c.mu.Unlock()
	if f != nil {
		f(n.Update)
	}
	return nil
}

var errNoFS = errors.New("this client offers no file system or terminal")

func (c *client) ReadTextFile(_ context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.buffers == nil {
		return sdk.ReadTextFileResponse{}, errNoFS
	}
	c.fsCalls = append(c.fsCalls, "read "+p.Path)
	if b, ok := c.buffers[p.Path]; ok {
		return sdk.ReadTextFileResponse{Content: b}, nil
	}
	data, err := os.ReadFile(p.Path)
	return sdk.ReadTextFileResponse{Content: string(data)}, err
}
func (c *client) WriteTextFile(_ context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.buffers == nil {
		return sdk.WriteTextFileResponse{}, errNoFS
	}
	c.fsCalls = append(c.fsCalls, "write "+p.Path)
	c.buffers[p.Path] = p.Content
	return sdk.WriteTextFileResponse{}, nil
}

// calls returns the fs calls so far and forgets them.
func (c *client) calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.fsCalls
	c.fsCalls = nil
	return out
}

// buffer returns the editor's buffer of path.
func (c *client) buffer(path string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.buffers[path]
	return b, ok
}
func (c *client) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errNoFS
}
func (c *client) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errNoFS
}
func (c *client) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errNoFS
}
func (c *client) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errNoFS
}
func (c *client) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errNoFS
}

// take returns the updates so far and forgets them.
func (c *client) take() []sdk.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.updates
	c.updates = nil
	return u
}

// questions returns the permission questions so far and forgets them.
func (c *client) questions() []sdk.RequestPermissionRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.asked
	c.asked = nil
	return q
}

// connect serves ACP over pipes to a new test client; the connection
// ends with the test.
func (e *env) connect() (*sdk.ClientSideConnection, *client) {
	return e.connectWith(&client{}, sdk.ClientCapabilities{})
}

// connectFS connects a client that offers the editor's files, holding
// buffers (by absolute path) not saved to disk.
func (e *env) connectFS(buffers map[string]string) (*sdk.ClientSideConnection, *client) {
	return e.connectWith(&client{buffers: buffers}, sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}})
}

// connectWith serves ACP over pipes to cl, which says it can do caps.
func (e *env) connectWith(cl *client, caps sdk.ClientCapabilities) (*sdk.ClientSideConnection, *client) {
	t := e.t
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- acp.Serve(ctx, acp.Config{Open: e.open, Version: "test"}, c2aR, a2cW)
		a2cW.Close()
	}()
	conn := sdk.NewClientSideConnection(cl, c2aW, a2cR)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	t.Cleanup(func() {
		c2aW.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		cancel()
	})
	if _, err := conn.Initialize(context.Background(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: caps}); err != nil {
		t.Fatal(err)
	}
	return conn, cl
}

// newSession opens a session in the env's workspace.
func (e *env) newSession(conn *sdk.ClientSideConnection) sdk.SessionId {
	e.t.Helper()
	r, err := conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: e.work, McpServers: []sdk.McpServer{}})
	if err != nil {
		e.t.Fatal(err)
	}
	return r.SessionId
}

// prompt sends text and returns the answer.
func prompt(t testing.TB, conn *sdk.ClientSideConnection, id sdk.SessionId, text string) sdk.PromptResponse {
	t.Helper()
	r, err := conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	if err != nil {
		t.Fatalf("prompt %q: %v", text, err)
	}
	return r
}

// pick answers every question with option id.
func pick(id string) func(sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
	return func(sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(sdk.PermissionOptionId(id))}
	}
}

// kinds lists the updates' kinds, with a tool call's kind and status.
func kinds(us []sdk.SessionUpdate) []string {
	var out []string
	for _, u := range us {
		switch {
		case u.UserMessageChunk != nil:
			out = append(out, "user")
		case u.AgentMessageChunk != nil:
			out = append(out, "agent")
		case u.AgentThoughtChunk != nil:
			out = append(out, "thought")
		case u.ToolCall != nil:
			out = append(out, "tool_call:"+string(u.ToolCall.Kind)+":"+string(u.ToolCall.Status))
		case u.ToolCallUpdate != nil:
			s := ""
			if u.ToolCallUpdate.Status != nil {
				s = string(*u.ToolCallUpdate.Status)
			}
			out = append(out, "tool_call_update:"+s)
		case u.Plan != nil:
			out = append(out, "plan")
		case u.UsageUpdate != nil:
			out = append(out, "usage")
		case u.CurrentModeUpdate != nil:
			out = append(out, "mode:"+string(u.CurrentModeUpdate.CurrentModeId))
		default:
			out = append(out, "other")
		}
	}
	return out
}

// agentText is the agent message chunks' text.
func agentText(us []sdk.SessionUpdate) string {
	var s string
	for _, u := range us {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			s += u.AgentMessageChunk.Content.Text.Text
		}
	}
	return s
}
