package mcpserver_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/mcpserver"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/jsonl"
	"github.com/reinhq/rein/workspace"
)

// fixture is a server over a temporary workspace, its session store and a
// scripted model.
type fixture struct {
	srv   *mcpserver.Server
	root  string
	store *watchStore
	model *llmtest.Scripted
	open  mcpserver.Opener
}

// newFixture starts a server in a new workspace whose runs use the
// scripted replies; flags are the server's settings flags.
func newFixture(t testing.TB, flags map[string]string, replies ...llmtest.Reply) *fixture {
	t.Helper()
	dir := t.TempDir()
	home, root := filepath.Join(dir, "home"), filepath.Join(dir, "project")
	for _, d := range []string{home, filepath.Join(root, ".git"), filepath.Join(root, "sub")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("ship on Friday\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "REIN_SANDBOX": "off", "REIN_MODEL": "scripted/demo", "XDG_CONFIG_HOME": filepath.Join(home, ".config")}
	getenv := func(k string) string { return env[k] }
	js, err := jsonl.New(filepath.Join(dir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { js.Close() })
	f := &fixture{root: root, store: &watchStore{Store: js}, model: llmtest.NewScripted(replies...)}
	open := func(_ context.Context, wd string, o mcpserver.Options) (*runner.Setup, error) {
		fl := maps.Clone(flags)
		if fl == nil {
			fl = map[string]string{}
		}
		if o.Model != "" {
			fl[workspace.Model] = o.Model
		}
		if o.PermissionMode != "" {
			fl[workspace.PermissionMode] = o.PermissionMode
		}
		l, err := workspace.Load(workspace.Options{WorkDir: wd, Getenv: getenv, Flags: fl})
		if err != nil {
			return nil, err
		}
		return runner.NewSetup(runner.Config{Loaded: l, Store: f.store, SessionsDir: js.Dir(), Getenv: getenv,
			Resolve: func(_ *registry.Registry, spec string) (*runner.Model, error) {
				return &runner.Model{Provider: f.model, ProviderName: "scripted", Name: "demo", Label: spec,
					Caps: registry.Model{Name: "demo", ContextWindow: 100_000, MaxOutput: 4_000}}, nil
			}})
	}
	f.open = open
	f.srv, err = mcpserver.New(mcpserver.Config{Root: root, Store: f.store, Open: open, Version: "test", MaxPrompt: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// watchStore is the session store, telling the test each run that ends.
type watchStore struct {
	session.Store
	mu   sync.Mutex
	runs []chan session.RunRecord
}

// Append implements session.Store.
func (w *watchStore) Append(ctx context.Context, id string, e ...session.Entry) (int64, error) {
	seq, err := w.Store.Append(ctx, id, e...)
	for _, x := range e {
		if x.Kind == session.KindRun && x.Run != nil && !x.Run.EndedAt.IsZero() {
			w.mu.Lock()
			for _, c := range w.runs {
				select {
				case c <- *x.Run:
				default:
				}
			}
			w.mu.Unlock()
		}
	}
	return seq, err
}

// Acquire and Release pass the jsonl store's lock on.
func (w *watchStore) Acquire(id string) error { return w.Store.(session.Locker).Acquire(id) }

// Release implements session.Locker.
func (w *watchStore) Release(id string) { w.Store.(session.Locker).Release(id) }

// ended returns a channel receiving each run that ends from now on.
func (w *watchStore) ended() chan session.RunRecord {
	c := make(chan session.RunRecord, 8)
	w.mu.Lock()
	w.runs = append(w.runs, c)
	w.mu.Unlock()
	return c
}

// connect connects a go-sdk client over an in-memory transport.
func (f *fixture) connect(t testing.TB, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return f.connectVersion(t, opts, "")
}

// connectVersion connects a client speaking protocol version ("" the
// latest).
func (f *fixture) connectVersion(t testing.TB, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := f.srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and decodes its structured result into out; it
// returns the result (IsError and text for the caller to check).
func call(t testing.TB, cs *mcp.ClientSession, name string, args any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if out != nil && !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: result %s: %v", name, b, err)
		}
	}
	return res
}

// textOf is a result's text.
func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// A run with a tool call over two turns returns the answer, the session,
// the turns and the cost (SPEC FRONT-2, LOOP-1); continue sends a
// follow-up with the session's history (SESS-3); list_sessions and
// read_session show it.
func TestRunContinueListRead_FRONT2(t *testing.T) {
	f := newFixture(t, nil,
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "read_file", `{"path":"notes.txt"}`)}, Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}},
		llmtest.Reply{Text: "The notes say: ship on Friday.", Usage: llm.Usage{InputTokens: 120, OutputTokens: 12}},
		llmtest.Reply{Text: "Friday."},
	)
	cs := f.connect(t, nil)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); got != "continue,list_sessions,read_session,run" {
		t.Fatalf("tools = %s", got)
	}

	var run mcpserver.RunResult
	res := call(t, cs, "run", map[string]any{"prompt": "What do my notes say?"}, &run)
	if res.IsError || run.StopReason != "completed" || run.Text != "The notes say: ship on Friday." || run.Turns != 2 || run.SessionID == "" {
		t.Fatalf("run = %+v (error %v: %s)", run, res.IsError, textOf(res))
	}
	if run.Usage.InputTokens != 220 || run.Usage.OutputTokens != 22 {
		t.Errorf("usage = %+v, want the two turns' sum", run.Usage)
	}
	if txt := textOf(res); !strings.Contains(txt, "ship on Friday") || !strings.Contains(txt, run.SessionID) {
		t.Errorf("text %q lacks the answer or the session id", txt)
	}

	var more mcpserver.RunResult
	call(t, cs, "continue", map[string]any{"session_id": run.SessionID, "prompt": "Which day, in one word?"}, &more)
	if more.Text != "Friday." || more.SessionID != run.SessionID {
		t.Fatalf("continue = %+v", more)
	}
	reqs := f.model.Requests()
	last := reqs[len(reqs)-1]
	if len(last.Messages) != 5 || llmtest.LastUserText(last) != "Which day, in one word?" {
		t.Errorf("the follow-up went with %d messages (want the 4 before it and itself)", len(last.Messages))
	}

	var list mcpserver.ListResult
	call(t, cs, "list_sessions", map[string]any{}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ID != run.SessionID || list.Sessions[0].Runs != 2 {
		t.Fatalf("list = %+v", list)
	}

	var read mcpserver.ReadResult
	call(t, cs, "read_session", map[string]any{"session_id": run.SessionID}, &read)
	for _, want := range []string{"What do my notes say?", "[tool call read_file", "ship on Friday", "Friday."} {
		if !strings.Contains(read.Text, want) {
			t.Errorf("read_session text lacks %q:\n%s", want, read.Text)
		}
	}
	if read.Messages != 6 || read.Truncated {
		t.Errorf("read = %d messages, truncated %v", read.Messages, read.Truncated)
	}
	var short mcpserver.ReadResult
	call(t, cs, "read_session", map[string]any{"session_id": run.SessionID, "max_chars": 40}, &short)
	if !short.Truncated || len(short.Text) > 40+len("…") || !strings.Contains(short.Text, "Friday.") {
		t.Errorf("read_session max_chars 40 = %q (truncated %v): want the newest 40 characters", short.Text, short.Truncated)
	}
}

// A permission question goes to a client with elicitation (SPEC PERM-3):
// accept runs the call, decline refuses it; a client without elicitation
// gets the configured mode's answer, a deny for a call that asks.
func TestPermissionByElicitation_PERM3(t *testing.T) {
	for _, tc := range []struct {
		name    string
		elicit  string // "" declares no elicitation
		version string // the protocol; "" the latest, where questions go as input requests (SEP-2322)
		written bool
	}{
		{"accept", "accept", "", true},
		{"decline", "decline", "", false},
		{"cancel", "cancel", "", false},
		{"no elicitation", "", "", false},
		{"accept, elicitation/create", "accept", "2025-06-18", true},
		{"decline, elicitation/create", "decline", "2025-06-18", false},
		{"no elicitation, 2025-06-18", "", "2025-06-18", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil,
				llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("w1", "write_file", `{"path":"out.txt","content":"hello\n"}`)}},
				llmtest.Reply{Text: "done"},
			)
			var asked []string
			opts := &mcp.ClientOptions{}
			if tc.elicit != "" {
				opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = append(asked, req.Params.Message)
					return &mcp.ElicitResult{Action: tc.elicit}, nil
				}
			}
			cs := f.connectVersion(t, opts, tc.version)
			var run mcpserver.RunResult
			call(t, cs, "run", map[string]any{"prompt": "write out.txt"}, &run)
			_, err := os.Stat(filepath.Join(f.root, "out.txt"))
			if written := err == nil; written != tc.written {
				t.Errorf("out.txt written = %v, want %v", written, tc.written)
			}
			if tc.elicit == "" {
				if len(asked) != 0 {
					t.Errorf("asked %q without the capability", asked)
				}
			} else if len(asked) != 1 || !strings.Contains(asked[0], "write_file") || !strings.Contains(asked[0], "out.txt") {
				t.Errorf("questions = %q, want one naming write_file and out.txt", asked)
			}
			result := toolResultText(f.model.Requests()[1])
			if denied := strings.Contains(strings.ToLower(result), "denied") || strings.Contains(result, "declined"); denied == tc.written {
				t.Errorf("the model was told %q", result)
			}
		})
	}
}

// An accept with the form's "always" box keeps the rule: the second call
// like it runs without asking.
func TestPermissionAlways_PERM3(t *testing.T) {
	f := newFixture(t, nil,
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("w1", "write_file", `{"path":"a.txt","content":"a"}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("w2", "write_file", `{"path":"a.txt","content":"b"}`)}},
		llmtest.Reply{Text: "done"},
	)
	asked := 0
	cs := f.connect(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked++
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"always": true}}, nil
	}})
	var run mcpserver.RunResult
	call(t, cs, "run", map[string]any{"prompt": "write a.txt twice"}, &run)
	if b, err := os.ReadFile(filepath.Join(f.root, "a.txt")); err != nil || string(b) != "b" {
		t.Errorf("a.txt = %q, %v: want the second write's", b, err)
	}
	if asked != 1 {
		t.Errorf("asked %d times, want once (the second call under the kept rule)", asked)
	}
}

// toolResultText is the text of the tool results a request sends back.
func toolResultText(req *llm.Request) string {
	var b strings.Builder
	for _, m := range req.Messages {
		for _, blk := range m.Content {
			if r, ok := blk.(*llm.ToolResult); ok {
				b.WriteString(llm.Message{Content: r.Content}.TextOf())
			}
		}
	}
	return b.String()
}

// Cancelling the tool call (notifications/cancelled) while a tool runs
// stops the run: it ends cancelled, well before the command would.
func TestCancelMidTool_FRONT2(t *testing.T) {
	f := newFixture(t, map[string]string{workspace.PermissionMode: "bypass"},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("b1", "bash", `{"command":"sleep 60"}`)}},
		llmtest.Reply{Text: "not reached"},
	)
	started := make(chan struct{}, 1)
	cs := f.connect(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		if strings.Contains(req.Params.Message, "bash") {
			select {
			case started <- struct{}{}:
			default:
			}
		}
	}})
	cancelMidCall(t, f, cs, started, "run", map[string]any{"prompt": "sleep"})
}

// cancelMidCall calls tool name with args, cancels the call once started
// is signalled (a progress notification of the running command), and
// checks that the call failed and its run ended cancelled.
func cancelMidCall(t *testing.T, f *fixture, cs *mcp.ClientSession, started <-chan struct{}, name string, args map[string]any) {
	t.Helper()
	ended := f.store.ended()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: mcp.Meta{"progressToken": "p1"}})
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; err == nil {
		t.Error("the cancelled call returned no error")
	}
	select {
	case r := <-ended:
		if r.Reason != "cancelled" {
			t.Fatalf("the run ended %q (%s), want cancelled", r.Reason, r.Error)
		}
	case <-time.After(30 * time.Second): // a safety net, not a measure: the command sleeps 60 s
		t.Fatal("the run did not end after the call was cancelled")
	}
}

// A continue sent as soon as a cancelled continue of the same session is
// recorded — no result told the client when the cancelled run let the
// session go — runs once that run has wound down (hold; holds_internal_test.go
// makes the wait certain); the session then holds the cancelled call,
// answered, and all three runs (SPEC FRONT-2, SESS-3).
func TestContinueAfterCancel_FRONT2(t *testing.T) {
	f := newFixture(t, map[string]string{workspace.PermissionMode: "bypass"},
		llmtest.Reply{Text: "Ready."},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("b1", "bash", `{"command":"sleep 60"}`)}},
		llmtest.Reply{Text: "Still here."},
	)
	started := make(chan struct{}, 1)
	cs := f.connect(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		select {
		case started <- struct{}{}:
		default:
		}
	}})
	var first mcpserver.RunResult
	call(t, cs, "run", map[string]any{"prompt": "get ready"}, &first)
	cancelMidCall(t, f, cs, started, "continue", map[string]any{"session_id": first.SessionID, "prompt": "sleep"})
	var again mcpserver.RunResult
	if res := call(t, cs, "continue", map[string]any{"session_id": first.SessionID, "prompt": "still there?"}, &again); res.IsError {
		t.Fatalf("continue after the cancel: %s", textOf(res))
	}
	if again.Text != "Still here." || again.StopReason != "completed" {
		t.Errorf("continue after the cancel = %+v", again)
	}
	var read mcpserver.ReadResult
	call(t, cs, "read_session", map[string]any{"session_id": first.SessionID}, &read)
	if read.Session.Runs != 3 || !strings.Contains(read.Text, "[tool error: interrupted") {
		t.Errorf("the session after the cancel: %d runs\n%s", read.Session.Runs, read.Text)
	}
}

// A session runs one run at a time: while a run waits on its permission
// question, a continue of its session — by the same client or another —
// is refused, saying so, and the model is not called for it; once the
// run has answered, the session continues (SPEC FRONT-2, SESS-3).
func TestContinueWhileRunning_FRONT2(t *testing.T) {
	f := newFixture(t, nil,
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("w1", "write_file", `{"path":"out.txt","content":"hello\n"}`)}},
		llmtest.Reply{Text: "done"},
		llmtest.Reply{Text: "continued"},
	)
	asking, answer := make(chan struct{}), make(chan struct{})
	cs := f.connectVersion(t, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		close(asking)
		<-answer
		return &mcp.ElicitResult{Action: "accept"}, nil
	}}, "2025-06-18")
	other := f.connect(t, nil)
	ran := make(chan mcpserver.RunResult, 1)
	go func() {
		var r mcpserver.RunResult
		call(t, cs, "run", map[string]any{"prompt": "write out.txt"}, &r)
		ran <- r
	}()
	<-asking
	var list mcpserver.ListResult
	call(t, other, "list_sessions", nil, &list)
	if len(list.Sessions) != 1 {
		t.Fatalf("sessions while the run asks: %+v", list.Sessions)
	}
	id := list.Sessions[0].ID
	for _, c := range []*mcp.ClientSession{other, cs} {
		res := call(t, c, "continue", map[string]any{"session_id": id, "prompt": "and another"}, nil)
		if !res.IsError || !strings.Contains(textOf(res), "session "+id+" is running") {
			t.Errorf("continue while the session runs = error %v %q", res.IsError, clipped(textOf(res)))
		}
	}
	close(answer)
	if r := <-ran; r.Text != "done" || r.SessionID != id {
		t.Errorf("the run = %+v", r)
	}
	if n := len(f.model.Requests()); n != 2 {
		t.Errorf("the model was called %d times, want 2 (the refused continues call it not)", n)
	}
	var next mcpserver.RunResult
	call(t, other, "continue", map[string]any{"session_id": id, "prompt": "and another"}, &next)
	if next.Text != "continued" {
		t.Errorf("continue after the run = %+v", next)
	}
}

// Attack rows: what a client (or the model behind it) sends is hostile.
func TestAttacks_FRONT2(t *testing.T) {
	f := newFixture(t, nil, llmtest.Reply{Text: "ok"})
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(f.root, "escape")); err != nil {
		t.Fatal(err)
	}
	cs := f.connect(t, nil)
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"workspace outside the root", "run", map[string]any{"prompt": "hi", "workspace": outside}, "outside"},
		{"workspace up and out", "run", map[string]any{"prompt": "hi", "workspace": "../.."}, "outside"},
		{"workspace through a symlink", "run", map[string]any{"prompt": "hi", "workspace": "escape"}, "outside"},
		{"workspace missing", "run", map[string]any{"prompt": "hi", "workspace": "nope"}, "at or below"},
		{"workspace a file", "run", map[string]any{"prompt": "hi", "workspace": "notes.txt"}, "not a directory"},
		{"empty prompt", "run", map[string]any{"prompt": "  "}, "prompt is empty"},
		{"huge prompt", "run", map[string]any{"prompt": strings.Repeat("A", 64<<10+1)}, "more than the 65536"},
		{"huge prompt to continue", "continue", map[string]any{"session_id": "x", "prompt": strings.Repeat("A", 64<<10+1)}, "more than the 65536"},
		{"session id traversal", "read_session", map[string]any{"session_id": "../../etc/passwd"}, "not a session id"},
		{"session id traversal to continue", "continue", map[string]any{"session_id": "../x", "prompt": "hi"}, "not a session id"},
		{"session id dot", "read_session", map[string]any{"session_id": ".."}, "not a session id"},
		{"session id unknown", "read_session", map[string]any{"session_id": "0192abc"}, "no session 0192abc"},
		{"negative limit", "list_sessions", map[string]any{"limit": -1}, "positive"},
		{"negative max_chars", "read_session", map[string]any{"session_id": "x", "max_chars": -5}, "positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, tc.tool, tc.args, nil)
			if !res.IsError || !strings.Contains(textOf(res), tc.want) {
				t.Errorf("%s = error %v %q, want an error saying %q", tc.tool, res.IsError, clipped(textOf(res)), tc.want)
			}
		})
	}
	if n := len(f.model.Requests()); n != 0 {
		t.Errorf("the model was called %d times by refused calls", n)
	}
}

// A session of a workspace outside the root is neither listed, read nor
// continued.
func TestForeignSession_FRONT2(t *testing.T) {
	f := newFixture(t, nil, llmtest.Reply{Text: "ok"})
	foreign := &session.Session{WorkDir: t.TempDir(), Preview: "secret plans"}
	if err := f.store.Create(context.Background(), foreign); err != nil {
		t.Fatal(err)
	}
	cs := f.connect(t, nil)
	var list mcpserver.ListResult
	call(t, cs, "list_sessions", map[string]any{}, &list)
	if len(list.Sessions) != 0 {
		t.Errorf("listed %+v", list.Sessions)
	}
	for tool, args := range map[string]map[string]any{
		"read_session": {"session_id": foreign.ID},
		"continue":     {"session_id": foreign.ID, "prompt": "hi"},
	} {
		res := call(t, cs, tool, args, nil)
		if !res.IsError || !strings.Contains(textOf(res), "no session") {
			t.Errorf("%s of a foreign session = %q", tool, textOf(res))
		}
	}
}

// A call may ask for a stricter permission mode, never a looser one.
func TestCheckMode_FRONT2(t *testing.T) {
	for _, tc := range []struct {
		configured, asked string
		ok                bool
	}{
		{"default", "default", true},
		{"default", "plan", true},
		{"default", "read-only", true},
		{"default", "accept-edits", false},
		{"default", "bypass", false},
		{"accept-edits", "default", true},
		{"bypass", "bypass", true},
		{"", "bypass", false},
		{"default", "bogus", false},
	} {
		err := mcpserver.CheckMode(tc.configured, tc.asked)
		if (err == nil) != tc.ok {
			t.Errorf("CheckMode(%q, %q) = %v, want ok %v", tc.configured, tc.asked, err, tc.ok)
		}
	}
}

// testToken is the bearer token of the HTTP tests.
const testToken = "test-token-0123456789abcdef"

// withToken is an HTTP client sending token as a bearer token.
func withToken(token string) *http.Client {
	return &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Over streamable HTTP on 127.0.0.1 the tools work for a client with the
// token, and a web page's requests are refused (attack rows: DNS
// rebinding's Host, a page's Origin — with the right token too).
func TestStreamableHTTP_FRONT2(t *testing.T) {
	f := newFixture(t, nil, llmtest.Reply{Text: "over HTTP"})
	h, err := f.srv.Handler(testToken)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: withToken(testToken)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var run mcpserver.RunResult
	call(t, cs, "run", map[string]any{"prompt": "hi"}, &run)
	if run.Text != "over HTTP" || run.SessionID == "" {
		t.Fatalf("run = %+v", run)
	}

	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tc := range []struct {
		name, host, origin, site string
		refused                  bool
	}{
		{"loopback", "", "", "", false},
		{"localhost name", "localhost:7879", "", "", false},
		{"rebound name", "attacker.example:7879", "", "", true},
		{"rebound name without port", "evil.test", "", "", true},
		{"web page origin", "", "https://evil.example", "", true},
		{"localhost page origin", "", "http://localhost:3000", "", true},
		{"null origin", "", "null", "", true},
		{"cross-site fetch", "", "", "cross-site", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", hs.URL, strings.NewReader(body))
			req.RequestURI = ""
			if tc.host != "" {
				req.Host = tc.host
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+testToken)
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.site != "" {
				req.Header.Set("Sec-Fetch-Site", tc.site)
			}
			resp, err := hs.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if refused := resp.StatusCode == 403; refused != tc.refused {
				t.Errorf("status %d, want refused %v", resp.StatusCode, tc.refused)
			}
		})
	}
}

// Over HTTP a client needs the server's bearer token (SPEC FRONT-2,
// attack rows): none, another, one of a different length, another scheme,
// the token with a prefix or a suffix are refused with 401 before the MCP
// handler sees the request, and a go-sdk client without it cannot
// connect; a weak token is refused when the server starts.
func TestHTTPBearerToken_FRONT2(t *testing.T) {
	f := newFixture(t, nil)
	for _, weak := range []string{"", "short", strings.Repeat("x", 15), "has space in it 0123", "quote\"0123456789abcdef"} {
		if _, err := f.srv.Handler(weak); err == nil {
			t.Errorf("Handler(%q) took a weak token", weak)
		}
	}
	h, err := f.srv.Handler(testToken)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tc := range []struct {
		name, auth string
		want       int
	}{
		{"no token", "", 401},
		{"wrong token", "Bearer wrong-token-0123456789abcdef", 401},
		{"shorter token", "Bearer " + testToken[:len(testToken)-1], 401},
		{"longer token", "Bearer " + testToken + "x", 401},
		{"basic scheme", "Basic " + testToken, 401},
		{"token without scheme", testToken, 401},
		{"empty bearer", "Bearer ", 401},
		{"right token", "Bearer " + testToken, 200},
		{"scheme in lower case", "bearer " + testToken, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", hs.URL, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := hs.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate = %q", resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
	for _, token := range []string{"", "wrong-token-0123456789abcdef"} {
		tr := &mcp.StreamableClientTransport{Endpoint: hs.URL}
		if token != "" {
			tr.HTTPClient = withToken(token)
		}
		if cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), tr, nil); err == nil {
			cs.Close()
			t.Errorf("a go-sdk client with token %q connected", token)
		}
	}
}

// Over authenticated HTTP a permission question goes to the go-sdk client
// as elicitation (PERM-3): accepted, the write runs.
func TestHTTPElicitation_PERM3(t *testing.T) {
	f := newFixture(t, nil,
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("w1", "write_file", `{"path":"out.txt","content":"hello\n"}`)}},
		llmtest.Reply{Text: "done"},
	)
	h, err := f.srv.Handler(testToken)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	var asked []string
	opts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		return &mcp.ElicitResult{Action: "accept"}, nil
	}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: withToken(testToken)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var run mcpserver.RunResult
	call(t, cs, "run", map[string]any{"prompt": "write out.txt"}, &run)
	if data, err := os.ReadFile(filepath.Join(f.root, "out.txt")); err != nil || string(data) != "hello\n" {
		t.Errorf("out.txt = %q, %v", data, err)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "write_file") {
		t.Errorf("questions = %q", asked)
	}
}

// clipped shortens a text for a failure message.
func clipped(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// A question answered in a new call (protocol 2026-07-28, SEP-2322) is
// answered only by the client it was put to, once (attack rows: a made-up
// request state, another client's, one used twice).
func TestRequestStateAttacks_FRONT2(t *testing.T) {
	f := newFixture(t, nil,
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("w1", "write_file", `{"path":"out.txt","content":"x"}`)}},
		llmtest.Reply{Text: "done"},
	)
	manual := &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		}}
	owner, other := f.connect(t, manual), f.connect(t, manual)
	ctx := context.Background()
	first, err := owner.CallTool(ctx, &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"prompt": "write"}})
	if err != nil || !first.NeedsInput() || first.RequestState == "" || len(first.InputRequests) != 1 {
		t.Fatalf("first call = %+v, %v: want one input request", first, err)
	}
	accept := mcp.InputResponseMap{"rein": &mcp.ElicitResult{Action: "accept"}}
	for name, state := range map[string]string{"made up": "00112233445566778899aabbccddeeff", "another client's": first.RequestState} {
		res, err := other.CallTool(ctx, &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"prompt": "write"},
			RequestState: state, InputResponses: accept})
		if err != nil || !res.IsError || !strings.Contains(textOf(res), "names no run") {
			t.Errorf("%s request state: %v %q", name, err, textOf(res))
		}
	}
	if _, err := os.Stat(filepath.Join(f.root, "out.txt")); err == nil {
		t.Fatal("another client's answer ran the call")
	}
	var run mcpserver.RunResult
	res, err := owner.CallTool(ctx, &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"prompt": "write"},
		RequestState: first.RequestState, InputResponses: accept})
	if err != nil || res.IsError {
		t.Fatalf("the owner's answer: %v %q", err, textOf(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	if json.Unmarshal(b, &run); run.Text != "done" {
		t.Errorf("run = %s", b)
	}
	if _, err := os.Stat(filepath.Join(f.root, "out.txt")); err != nil {
		t.Errorf("the accepted call did not run: %v", err)
	}
	again, err := owner.CallTool(ctx, &mcp.CallToolParams{Name: "run", Arguments: map[string]any{"prompt": "write"},
		RequestState: first.RequestState, InputResponses: accept})
	if err != nil || !again.IsError {
		t.Errorf("a request state used twice: %v %q", err, textOf(again))
	}
}

// ask_user's question goes to the client as a form with the options as a
// choice; the answer reaches the model.
func TestAskUserByElicitation_FRONT2(t *testing.T) {
	f := newFixture(t, nil,
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("q1", "ask_user", `{"question":"Which colour?","options":["red","blue"]}`)}},
		llmtest.Reply{Text: "blue it is"},
	)
	var schema string
	cs := f.connect(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		b, _ := json.Marshal(req.Params.RequestedSchema)
		schema = req.Params.Message + " " + string(b)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "blue"}}, nil
	}})
	var run mcpserver.RunResult
	call(t, cs, "run", map[string]any{"prompt": "pick a colour"}, &run)
	if !strings.Contains(schema, "Which colour?") || !strings.Contains(schema, `"enum":["red","blue"]`) {
		t.Errorf("the question went as %s", schema)
	}
	if got := toolResultText(f.model.Requests()[1]); !strings.Contains(got, "blue") {
		t.Errorf("the model was told %q", got)
	}
}
