package main

// The harness of the split deployment's tenant test (SPEC API-9, API-5):
// a mock vendor that answers each prompt with the tool calls scripted for
// its label and records the results the model sees, and a JWT caller
// that speaks to an API process with its bearer token.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// tenantVendor is a mock vendor that answers a prompt labelled msg-…
// with the tool calls scripted for the label (or a text when none are),
// and the request carrying their results with a text; it keeps the tool
// results the model was sent, by label and call id. It answers by
// request, not by arrival order, as workers run sessions concurrently.
type tenantVendor struct {
	URL string

	mu      sync.Mutex
	calls   map[string][]mockserver.ToolCall     // by label
	results map[string]map[string]llm.ToolResult // by label, then call id
}

func newTenantVendor(t testing.TB) *tenantVendor {
	v := &tenantVendor{calls: map[string][]mockserver.ToolCall{}, results: map[string]map[string]llm.ToolResult{}}
	ts := httptest.NewServer(http.HandlerFunc(v.serveHTTP))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	v.URL = ts.URL
	return v
}

// script makes the prompt label answered with calls.
func (v *tenantVendor) script(label string, calls ...mockserver.ToolCall) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.calls[label] = calls
}

// resultsOf returns the tool results the model was sent after the calls
// of label, by call id.
func (v *tenantVendor) resultsOf(label string) map[string]llm.ToolResult {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := map[string]llm.ToolResult{}
	for id, r := range v.results[label] {
		out[id] = r
	}
	return out
}

func (v *tenantVendor) serveHTTP(w http.ResponseWriter, r *http.Request) {
	m, body, ok := vendorPost(w, r)
	if !ok {
		return
	}
	label, fresh, _ := readPrompt(body)
	v.mu.Lock()
	calls := v.calls[label]
	v.mu.Unlock()
	turn := mockserver.Turn{Text: "Done: " + label + "."}
	if fresh && len(calls) > 0 {
		turn = mockserver.Turn{ToolCalls: calls}
	}
	vendorAnswer(m, w, r, body, turn)
	reqs := m.Requests()
	if fresh || label == "" || len(reqs) != 1 || reqs[0].Decoded == nil {
		return
	}
	msgs := reqs[0].Decoded.Messages
	if len(msgs) == 0 {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.results[label] == nil {
		v.results[label] = map[string]llm.ToolResult{}
	}
	for _, b := range msgs[len(msgs)-1].Content {
		if tr, ok := b.(*llm.ToolResult); ok {
			v.results[label][tr.ToolUseID] = *tr
		}
	}
}

// toolResultText is the text of a tool result.
func toolResultText(tr llm.ToolResult) string {
	var b strings.Builder
	for _, c := range tr.Content {
		if x, ok := c.(*llm.Text); ok {
			b.WriteString(x.Text)
		}
	}
	return b.String()
}

// jwtCaller is one caller of an API process: every request carries its
// HS256 bearer token, whose subject is the caller's name.
type jwtCaller struct {
	t           testing.TB
	name, token string
	base        string // the API process's http://127.0.0.1:PORT
}

// newJWTCaller signs a token for name with secret, valid for an hour.
func newJWTCaller(t testing.TB, name string, secret []byte, base string) *jwtCaller {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": name, "exp": time.Now().Add(time.Hour).Unix()}).SignedString(secret)
	if err != nil {
		t.Fatal(err)
	}
	return &jwtCaller{t: t, name: name, token: tok, base: base}
}

// as is the caller reporting to t (a subtest's).
func (c *jwtCaller) as(t testing.TB) *jwtCaller {
	d := *c
	d.t = t
	return &d
}

// call sends a JSON request as the caller and decodes a 2xx answer into
// out (when not nil); it returns the status and the raw answer.
func (c *jwtCaller) call(method, path string, body, out any) (int, []byte) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s: %s %s: %v", c.name, method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s: %s %s: read the answer: %v", c.name, method, path, err)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s: %s %s: %v in %s", c.name, method, path, err, raw)
		}
	}
	return resp.StatusCode, raw
}

// must is call that fails the test unless the status is want.
func (c *jwtCaller) must(want int, method, path string, body, out any) []byte {
	c.t.Helper()
	code, raw := c.call(method, path, body, out)
	if code != want {
		c.t.Fatalf("%s: %s %s: status %d, want %d: %s", c.name, method, path, code, want, raw)
	}
	return raw
}

// session opens a project workspace on dir and a session in it.
func (c *jwtCaller) session(dir string) string {
	c.t.Helper()
	var ws api.Workspace
	c.must(http.StatusCreated, http.MethodPost, "/workspaces", map[string]string{"kind": "project", "dir": dir}, &ws)
	var sess api.Session
	c.must(http.StatusCreated, http.MethodPost, "/sessions", map[string]string{"workspace_id": ws.ID}, &sess)
	return sess.ID
}

// post posts the prompt text in permission mode mode and returns its run.
func (c *jwtCaller) post(sid, text, mode string) string {
	c.t.Helper()
	var acc api.Accepted
	c.must(http.StatusAccepted, http.MethodPost, "/sessions/"+sid+"/messages", map[string]any{"text": text, "permission_mode": mode}, &acc)
	if acc.RunID == "" {
		c.t.Fatalf("%s: POST message answered %+v", c.name, acc)
	}
	return acc.RunID
}

// finalRun waits (bounded by guard) until the run is final.
func (c *jwtCaller) finalRun(id string) api.Run {
	c.t.Helper()
	deadline := time.Now().Add(guard)
	for {
		var r api.Run
		c.must(http.StatusOK, http.MethodGet, "/runs/"+id, nil, &r)
		if finalStatus(r.Status) {
			return r
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: run %s still %s after %s", c.name, id, r.Status, guard)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// events opens the session's event stream as the caller, read for t.
func (c *jwtCaller) events(t *testing.T, sid string) *stream {
	t.Helper()
	resp, cancel := c.openEvents(sid)
	return newStream(t, resp.Body, func() {
		cancel()
		resp.Body.Close()
	})
}

// openEvents opens the session's event stream as the caller; cancel ends
// it.
func (c *jwtCaller) openEvents(sid string) (*http.Response, context.CancelFunc) {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/sessions/"+sid+"/events", nil)
	if err != nil {
		cancel()
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		c.t.Fatalf("%s: GET events: %v", c.name, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		c.t.Fatalf("%s: GET events: %s: %s", c.name, resp.Status, b)
	}
	return resp, cancel
}
