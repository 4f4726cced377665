package gatewaytest

import (
	"context"
	"fmt"
	"iter"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
)

// The suite's users and chats.
const (
	Owner    = "1001" // on the allowlist
	Stranger = "6666" // not
	Chat     = "5001"
	Chat2    = "5002"
)

// Setup returns the fake platform of a test and a constructor of the
// channel under test against it; each call of the constructor returns a
// new channel (a restarted gateway's).
type Setup func(t *testing.T) (Platform, func() gateway.Channel)

// RunChannel drives a real gateway — runner.Service over the in-memory
// stores, the scripted model, the channel under test against its fake
// platform — through what every channel must do (SPEC GW-2, PERM-3): a
// conversation with a tool call, an approval by button, a denied
// stranger, a platform's 429, and a restart that resumes the chat and
// does not answer a redelivered update twice.
func RunChannel(t *testing.T, setup Setup) {
	t.Run("conversation with a tool call", func(t *testing.T) {
		e := Start(t, setup, Options{})
		e.P.Send(t, Chat, Owner, "please list the files")
		final := e.WaitText(t, Chat, "I looked: ")
		if !strings.Contains(final.Text, "notes.md") {
			t.Errorf("the reply %q does not carry the tool's result (notes.md)", final.Text)
		}
		if e.Ch.Limits().CanEdit && final.Edits == 0 {
			t.Errorf("the reply was not shown as progress first (no edit): %+v", e.P.Messages(Chat))
		}
	})
	t.Run("approval by button", func(t *testing.T) {
		e := Start(t, setup, Options{})
		e.P.Send(t, Chat, Owner, "please write a file")
		q := e.WaitText(t, Chat, "🔐 Allow write_file")
		// A stranger cannot answer; the question stays.
		e.Answer(t, q, Stranger, "once")
		e.WaitText(t, Chat, "Sorry, ") // a refusal, whichever way the stranger answered
		if _, err := os.Stat(filepath.Join(e.Dir, "out.txt")); err == nil {
			t.Fatal("the file was written on a stranger's answer")
		}
		e.Answer(t, q, Owner, "once")
		e.WaitText(t, Chat, "written")
		if b, err := os.ReadFile(filepath.Join(e.Dir, "out.txt")); err != nil || string(b) != "hello" {
			t.Fatalf("out.txt = %q, %v; want hello", b, err)
		}
		if e.Ch.Limits().CanEdit {
			e.WaitText(t, Chat, "✅ Allowed once")
		}
	})
	t.Run("a stranger is refused", func(t *testing.T) {
		e := Start(t, setup, Options{})
		e.P.Send(t, Chat2, Stranger, "hi, who are you?")
		m := e.WaitText(t, Chat2, "Sorry, this agent answers only")
		if !strings.Contains(m.Text, Stranger) {
			t.Errorf("the refusal %q does not tell the stranger their id", m.Text)
		}
		e.P.Send(t, Chat2, Stranger, "hello??")
		e.P.Send(t, Chat, Owner, "hello")
		e.WaitText(t, Chat, "echo: hello")
		if n := e.Calls(); n != 1 {
			t.Errorf("the model was called %d times; only the owner's message may reach it", n)
		}
		if n := len(e.P.Messages(Chat2)); n != 1 {
			t.Errorf("the stranger got %d messages; want one refusal: %+v", n, e.P.Messages(Chat2))
		}
	})
	t.Run("429 from the platform", func(t *testing.T) {
		e := Start(t, setup, Options{})
		e.P.Throttle(2, time.Second)
		e.P.Send(t, Chat, Owner, "hello there")
		e.WaitText(t, Chat, "echo: hello there")
		if e.P.Throttled() == 0 {
			t.Error("the platform never answered 429: the test did not test it")
		}
	})
	t.Run("restart", func(t *testing.T) {
		e := Start(t, setup, Options{})
		e.P.Send(t, Chat, Owner, "remember the word mango")
		// The whole reply, as the progress message shows it before the run
		// ends: the restart may come before, while or after the reply is
		// sent, and it is sent once whichever (the restarted gateway edits
		// the same message).
		e.WaitText(t, Chat, "echo: remember the word mango (0 messages before)")
		e.Restart(t)
		e.P.Redeliver(t) // the platform did not see the acknowledgement
		e.P.Send(t, Chat, Owner, "what was the word")
		// The progress message shows the reply while it streams: read the
		// count only once the reply is whole.
		m := e.WaitText(t, Chat, "echo: what was the word")
		if !Poll(t, 30*time.Second, func() bool {
			m = e.WaitText(t, Chat, "echo: what was the word")
			return strings.HasSuffix(m.Text, "before)")
		}) {
			t.Fatalf("the reply never ended: %q", m.Text)
		}
		if !strings.Contains(m.Text, "(2 messages before)") {
			t.Errorf("after the restart the chat is not in its session: %q", m.Text)
		}
		// Count once every update is handled: the restarted gateway may
		// finish the first reply after the second.
		e.WaitHandled(t)
		if n := e.Count(Chat, "echo: remember the word mango"); n != 1 {
			t.Errorf("the redelivered message was answered %d times; want once: %+v", n, e.P.Messages(Chat))
		}
	})
}

// Env is one gateway (restartable) over stores that outlive it, with a
// channel against its fake platform and the scripted model.
type Env struct {
	P  Platform
	Ch gateway.Channel // the running gateway's
	// Dir is the chats' workspace (a project: tools work there).
	Dir string
	// Sessions and Ledger outlive restarts.
	Sessions *session.MemStore
	Ledger   *session.MemLedger

	opts    Options
	newCh   func() gateway.Channel
	state   *gateway.State
	calls   atomic.Int64
	getenv  func(string) string
	dataDir string

	mu     sync.Mutex
	models []string // the model specs resolved, in order
	stop   func()
	server *httptest.Server
	g      *gateway.Gateway
}

// Gateway is the running gateway.
func (e *Env) Gateway() *gateway.Gateway {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.g
}

// State is the gateway's state, which outlives restarts.
func (e *Env) State() *gateway.State { return e.state }

// WaitHandled waits until the gateway has handled every update it took:
// each one's reply went out (or was given up).
func (e *Env) WaitHandled(t testing.TB) {
	t.Helper()
	var n int
	var err error
	if !Poll(t, 30*time.Second, func() bool {
		n, err = e.state.Unanswered(t.Context())
		return err == nil && n == 0
	}) {
		t.Fatalf("%d updates still unanswered after 30 s (%v); the chat: %+v", n, err, e.P.Messages(Chat))
	}
}

// Calls counts the model's calls.
func (e *Env) Calls() int64 { return e.calls.Load() }

// Models returns the model specs the runs resolved, in order.
func (e *Env) Models() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.models...)
}

// Options change an Env.
type Options struct {
	// Model, when set, replaces the scripted model's replies (the default
	// lists, writes or echoes; see [Env]).
	Model func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error]
	// Configure changes the gateway's configuration before it starts
	// (its route is Routes[0]).
	Configure func(*gateway.Config)
	// Env adds variables the runs see (REIN_ASK_TIMEOUT, …).
	Env map[string]string
	// Home is the HOME of the runs (the user's configuration and memory);
	// default a new temporary directory.
	Home string
	// Vision gives the model vision: images reach it rather than a note.
	Vision bool
}

// Start boots an Env over setup's platform; t's cleanup stops it.
func Start(t *testing.T, setup Setup, opts Options) *Env {
	t.Helper()
	p, newCh := setup(t)
	return StartWith(t, p, newCh, opts)
}

// StartWith boots an Env over a platform and its channel's constructor
// (benchmarks: a testing.B); tb's cleanup stops it.
func StartWith(t testing.TB, p Platform, newCh func() gateway.Channel, opts Options) *Env {
	t.Helper()
	home := opts.Home
	if home == "" {
		home = t.TempDir()
	}
	vars := map[string]string{"HOME": home, "PATH": os.Getenv("PATH"), "REIN_SANDBOX": "off"}
	for k, v := range opts.Env {
		vars[k] = v
	}
	state, err := gateway.OpenState(filepath.Join(t.TempDir(), "gateway.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { state.Close() })
	e := &Env{opts: opts, P: p, newCh: newCh, Sessions: session.NewMemStore(), Ledger: session.NewMemLedger(), state: state,
		Dir: t.TempDir(), getenv: func(k string) string { return vars[k] }, dataDir: t.TempDir()}
	if err := os.WriteFile(filepath.Join(e.Dir, "notes.md"), []byte("# notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.boot(t)
	t.Cleanup(e.halt)
	return e
}

// boot starts a gateway with a new channel and service.
func (e *Env) boot(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	bus := eventbus.NewMemory(eventbus.Options{})
	svc, err := runner.NewService(runner.ServiceConfig{Sessions: e.Sessions, Ledger: e.Ledger, Bus: bus, DataDir: e.dataDir,
		Getenv: e.getenv, Resolve: func(_ *registry.Registry, spec string) (*runner.Model, error) {
			e.mu.Lock()
			e.models = append(e.models, spec)
			e.mu.Unlock()
			return &runner.Model{Provider: e.model(), ProviderName: "scripted", Name: "m", Label: "scripted/m",
				Caps: registry.Model{Name: "m", ContextWindow: 200_000, MaxOutput: 8_000, Vision: e.opts.Vision}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	e.Ch = e.newCh()
	gcfg := gateway.Config{Service: svc, Sessions: e.Sessions, Ledger: e.Ledger, Bus: bus, State: e.state,
		Routes: []gateway.Route{{Channel: e.Ch, Allow: []string{Owner}, Workspace: e.Dir}}}
	if e.opts.Configure != nil {
		e.opts.Configure(&gcfg)
	}
	g, err := gateway.New(ctx, gcfg)
	if err != nil {
		t.Fatal(err)
	}
	var srv *httptest.Server
	if g.Receives() {
		srv = httptest.NewServer(g.Handler())
		e.P.Target(srv.URL + "/" + e.Ch.Name())
	}
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	e.mu.Lock()
	e.g = g
	e.server = srv
	e.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("gateway.Run: %v", err)
		}
		if srv != nil {
			srv.Close()
		}
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second) // a cleanup: the test context is done
		defer scancel()
		svc.Shutdown(sctx)
		bus.Close()
	}
	e.mu.Unlock()
}

func (e *Env) halt() {
	e.mu.Lock()
	stop := e.stop
	e.stop = nil
	e.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// restart stops the gateway and boots another over the same stores.
func (e *Env) Restart(t testing.TB) {
	e.halt()
	e.boot(t)
}

// model is the scripted model: "list" lists the workspace, "write"
// writes out.txt (a question in default mode), anything else is echoed
// with the number of messages before it.
func (e *Env) model() llm.Provider {
	var n atomic.Int64
	return &llmtest.Scripted{NoRecord: true, Repeat: &llmtest.Reply{Func: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		e.calls.Add(1)
		if e.opts.Model != nil {
			return e.opts.Model(ctx, req)
		}
		id := fmt.Sprintf("call_%d_%d", time.Now().UnixNano(), n.Add(1))
		last := req.Messages[len(req.Messages)-1]
		if rs := last.ToolResults(); len(rs) > 0 {
			out := ""
			for _, b := range rs[0].Content {
				if tx, ok := b.(*llm.Text); ok {
					out += tx.Text
				}
			}
			if rs[0].IsError {
				return llmtest.NewScripted(llmtest.Reply{Text: "failed: " + out}).Stream(ctx, req)
			}
			if strings.Contains(out, "notes.md") || strings.Contains(strings.ToLower(out), "director") {
				return llmtest.NewScripted(llmtest.Reply{Text: "I looked: " + out}).Stream(ctx, req)
			}
			return llmtest.NewScripted(llmtest.Reply{Text: "written"}).Stream(ctx, req)
		}
		text := userText(last)
		switch {
		case strings.Contains(text, "list the files"):
			return llmtest.NewScripted(llmtest.Reply{Text: "Let me look.", ToolCalls: []llm.ToolUse{llmtest.Call(id, "list_dir", `{"path":"."}`)}}).Stream(ctx, req)
		case strings.Contains(text, "write a file"):
			return llmtest.NewScripted(llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call(id, "write_file", `{"path":"out.txt","content":"hello"}`)}}).Stream(ctx, req)
		}
		before := 0
		for _, m := range req.Messages[:len(req.Messages)-1] {
			if m.Role == llm.RoleUser || m.Role == llm.RoleAssistant {
				before++
			}
		}
		return llmtest.NewScripted(llmtest.Reply{Text: fmt.Sprintf("echo: %s (%d messages before)", text, before), Chunk: 4}).Stream(ctx, req)
	}}}
}

// userText is the first text of a user message.
func userText(m llm.Message) string {
	for _, b := range m.Content {
		if t, ok := b.(*llm.Text); ok {
			return t.Text
		}
	}
	return ""
}

// WaitText waits for a bot message in chat containing s.
func (e *Env) WaitText(t testing.TB, chat, s string) Message {
	t.Helper()
	var found Message
	if !Poll(t, 30*time.Second, func() bool {
		for _, m := range e.P.Messages(chat) {
			if strings.Contains(m.Text, s) {
				found = m
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no message in chat %s contains %q after 30 s; the chat: %+v", chat, s, e.P.Messages(chat))
	}
	return found
}

// count counts the bot messages in chat containing s.
func (e *Env) Count(chat, s string) int {
	n := 0
	for _, m := range e.P.Messages(chat) {
		if strings.Contains(m.Text, s) {
			n++
		}
	}
	return n
}

// tokenRe finds an approval's token in a reply command.
var tokenRe = regexp.MustCompile(`/approve ([0-9a-f]+)`)

// answer answers a permission question as user: by its button where it
// has them, else by the reply command.
func (e *Env) Answer(t testing.TB, q Message, user, verdict string) {
	t.Helper()
	for _, b := range q.Buttons {
		if strings.HasSuffix(b.Data, ":"+verdict) {
			e.P.Press(t, gateway.MessageRef{ChatID: Chat, ID: q.ID}, user, b.Data)
			return
		}
	}
	m := tokenRe.FindStringSubmatch(q.Text)
	if m == nil {
		t.Fatalf("the question has neither buttons nor a reply command: %+v", q)
	}
	cmd := "/approve " + m[1]
	if verdict == "deny" {
		cmd = "/deny " + m[1]
	} else if verdict == "always" {
		cmd += " always"
	}
	e.P.Send(t, Chat, user, cmd)
}
