package server_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/server"
	"github.com/reinhq/rein/session"
)

var bg = context.Background()

// keys are the test's signing keys, made once.
type testKeys struct {
	ed     ed25519.PrivateKey
	edPub  ed25519.PublicKey
	rsa    *rsa.PrivateKey
	otherE ed25519.PrivateKey // a key the server does not know
}

var keys = sync.OnceValue(func() testKeys {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	_, other, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return testKeys{ed: priv, edPub: pub, rsa: rk, otherE: other}
})

// token signs an EdDSA token for sub that expires in an hour.
func token(t testing.TB, sub string) string {
	return sign(t, jwt.SigningMethodEdDSA, keys().ed, jwt.MapClaims{"sub": sub, "exp": time.Now().Add(time.Hour).Unix()})
}

func sign(t testing.TB, m jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(m, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fakeRuntime stands in for the runner: Submit stores a queued run in the
// ledger, Cancel marks it cancelled, Answer answers questions put with ask.
type fakeRuntime struct {
	ledger *session.MemLedger

	mu          sync.Mutex
	submissions []session.Submission
	pending     map[string]bool // runID/callID
	questions   map[string]bool // runID/callID
	replies     []api.QuestionAnswer
	answers     []permission.Verdict
	cancels     []string
	err         error // when set, every call fails with it
	panicMsg    string
}

func (f *fakeRuntime) Submit(ctx context.Context, s session.Submission) (*session.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.panicMsg != "" {
		panic(f.panicMsg)
	}
	if f.err != nil {
		return nil, f.err
	}
	r := &session.Run{SessionID: s.SessionID, Caller: s.Caller, Prompt: s.Text}
	if err := f.ledger.CreateRun(ctx, r); err != nil {
		return nil, err
	}
	f.submissions = append(f.submissions, s)
	return r, nil
}

func (f *fakeRuntime) Cancel(ctx context.Context, runID string) (*session.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	r, err := f.ledger.GetRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	if r.Status.Final() {
		return nil, fmt.Errorf("run %s: cancel: %w", runID, session.ErrConflict)
	}
	r.Status, r.Reason = session.RunCancelled, "cancelled"
	if err := f.ledger.UpdateRun(ctx, r); err != nil {
		return nil, err
	}
	f.cancels = append(f.cancels, runID)
	return r, nil
}

func (f *fakeRuntime) Answer(_ context.Context, runID, callID string, v permission.Verdict) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	if !f.pending[runID+"/"+callID] {
		return fmt.Errorf("run %s: no question for %s: %w", runID, callID, session.ErrNotFound)
	}
	delete(f.pending, runID+"/"+callID)
	f.answers = append(f.answers, v)
	return nil
}

// AnswerQuestion implements server.QuestionAnswerer: questions are put
// with askQuestion.
func (f *fakeRuntime) AnswerQuestion(_ context.Context, runID, callID, answer string, declined bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	if !f.questions[runID+"/"+callID] {
		return fmt.Errorf("run %s: no question for %s: %w", runID, callID, session.ErrNotFound)
	}
	delete(f.questions, runID+"/"+callID)
	f.replies = append(f.replies, api.QuestionAnswer{Answer: answer, Declined: declined})
	return nil
}

// askQuestion puts an ask_user question for callID in run runID.
func (f *fakeRuntime) askQuestion(runID, callID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.questions == nil {
		f.questions = map[string]bool{}
	}
	f.questions[runID+"/"+callID] = true
}

// ask puts a permission question for callID in run runID.
func (f *fakeRuntime) ask(runID, callID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending == nil {
		f.pending = map[string]bool{}
	}
	f.pending[runID+"/"+callID] = true
}

// subs returns the submissions so far.
func (f *fakeRuntime) subs() []session.Submission {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]session.Submission(nil), f.submissions...)
}

// verdicts returns the answers so far.
func (f *fakeRuntime) verdicts() []permission.Verdict {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]permission.Verdict(nil), f.answers...)
}

// env is a server over in-memory stores, served on 127.0.0.1.
type env struct {
	srv    *server.Server
	ts     *httptest.Server
	store  *session.MemStore
	ledger *session.MemLedger
	bus    *eventbus.Memory
	rt     *fakeRuntime
	ws     *fakeWorkspaces
	root   string
	logs   *syncBuffer
}

// syncBuffer is a bytes.Buffer for a logger written from several
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newEnvConfig returns a valid config over fresh in-memory stores.
func newEnvConfig(t testing.TB) server.Config {
	bus := eventbus.NewMemory(eventbus.Options{})
	t.Cleanup(func() { _ = bus.Close() })
	return server.Config{Runtime: &fakeRuntime{}, Sessions: session.NewMemStore(), Ledger: session.NewMemLedger(), Bus: bus}
}

// newEnv builds an env whose server accepts the test's EdDSA and RSA keys,
// has one root (a temporary directory) and no rate limit; opts adjust the
// config before New.
func newEnv(t testing.TB, opts ...func(*server.Config)) *env {
	t.Helper()
	return newEnvBus(t, eventbus.Options{}, opts...)
}

// newEnvBus is newEnv with a bus made with busOpts.
func newEnvBus(t testing.TB, busOpts eventbus.Options, opts ...func(*server.Config)) *env {
	t.Helper()
	e := &env{store: session.NewMemStore(), ledger: session.NewMemLedger(), bus: eventbus.NewMemory(busOpts),
		root: t.TempDir(), logs: &syncBuffer{}}
	e.rt = &fakeRuntime{ledger: e.ledger}
	e.ws = newFakeWorkspaces()
	cfg := server.Config{
		Runtime: e.rt, Sessions: e.store, Ledger: e.ledger, Bus: e.bus, Workspaces: e.ws,
		Auth:      server.Auth{PublicKeys: []crypto.PublicKey{keys().edPub, &keys().rsa.PublicKey}},
		Roots:     []string{e.root},
		RateLimit: -1,
		// e.serve addresses the handler as http://rein.test (SPEC API-8).
		AllowedHosts: []string{"rein.test"},
		Version:      "test",
		Logger:       slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	e.ts = httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		e.ts.CloseClientConnections()
		e.ts.Close()
		_ = e.bus.Close()
	})
	return e
}

// response is what a request got.
type response struct {
	status int
	header http.Header
	body   []byte
}

// problem decodes a problem+json body.
func (r response) problem(t testing.TB) problem {
	t.Helper()
	var p problem
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q, want application/problem+json (body %s)", ct, r.body)
	}
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("problem: %v: %s", err, r.body)
	}
	return p
}

type problem struct {
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Errors []struct {
		Message  string `json:"message"`
		Location string `json:"location"`
	} `json:"errors"`
}

// do sends a request over the network; tok is the bearer token ("" none);
// body is JSON-encoded unless it is a string or nil.
func (e *env) do(t testing.TB, method, path, tok string, body any, hdr ...string) response {
	t.Helper()
	req := newRequest(t, method, e.ts.URL+path, tok, body, hdr...)
	res, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// serve sends a request straight to the handler, from remote (host:port).
func (e *env) serve(t testing.TB, method, path, tok string, body any, remote string, hdr ...string) response {
	t.Helper()
	req := newRequest(t, method, "http://rein.test"+path, tok, body, hdr...)
	req.RemoteAddr = remote
	rec := httptest.NewRecorder()
	e.srv.Handler().ServeHTTP(rec, req)
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

func newRequest(t testing.TB, method, url, tok string, body any, hdr ...string) *http.Request {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if strings.EqualFold(hdr[i], "Host") {
			req.Host = hdr[i+1] // net/http sends req.Host, never a Host header
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return req
}

// decode unmarshals a JSON body, failing on a status other than want.
func decode[T any](t testing.TB, r response, want int) T {
	t.Helper()
	var v T
	if r.status != want {
		t.Fatalf("status %d, want %d: %s", r.status, want, r.body)
	}
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("decode %T: %v: %s", v, err, r.body)
	}
	return v
}

// fixture is one caller's resources: a chat workspace, a session in it, a
// queued run of that session with a pending permission question.
type fixture struct {
	caller, tok             string
	workspace, session, run string
	idle                    string // a session without runs
	callID                  string
}

func (e *env) fixture(t testing.TB, caller string) fixture {
	t.Helper()
	f := fixture{caller: caller, tok: token(t, caller), callID: "call_1"}
	w := &session.Workspace{Caller: caller, Kind: session.WorkspaceChat}
	if err := e.ledger.CreateWorkspace(bg, w); err != nil {
		t.Fatal(err)
	}
	s := &session.Session{Caller: caller, Workspace: w.ID, Title: "t"}
	if err := e.store.Create(bg, s); err != nil {
		t.Fatal(err)
	}
	r := &session.Run{SessionID: s.ID, Caller: caller, Prompt: "hi"}
	if err := e.ledger.CreateRun(bg, r); err != nil {
		t.Fatal(err)
	}
	e.rt.ask(r.ID, f.callID)
	idle := &session.Session{Caller: caller, Workspace: w.ID}
	if err := e.store.Create(bg, idle); err != nil {
		t.Fatal(err)
	}
	f.workspace, f.session, f.run, f.idle = w.ID, s.ID, r.ID, idle.ID
	return f
}

func readAll(t testing.TB, res *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
