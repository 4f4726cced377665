package mcptool

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/reinhq/rein/tool"
	"go.uber.org/goleak"
)

// startMem starts a manager on one in-process server named "mem".
func startMem(t *testing.T, s *memServer, opts Options) *Manager {
	t.Helper()
	m := Start(t.Context(), []Server{{Name: "mem", CallTimeout: time.Minute, transport: s.transport}}, opts)
	t.Cleanup(func() { _ = m.Close() })
	if st := statusOf(m, "mem"); st.State != StateReady {
		t.Fatalf("status = %+v", st)
	}
	return m
}

func TestMemCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := startMem(t, newMemServer(), Options{})
		want := []string{"mcp__mem__big", "mcp__mem__echo", "mcp__mem__fail", "mcp__mem__wait"}
		if got := names(m.Tools()); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("tools = %v, want %v", got, want)
		}
		if st := statusOf(m, "mem"); st.Tools != 4 {
			t.Errorf("status tools = %d", st.Tools)
		}
		res := run(t, find(t, m.Tools(), "mcp__mem__echo"), `{"text":"hi"}`)
		if res.IsError || res.TextOf() != "echo: hi" {
			t.Errorf("echo: %+v", res)
		}
		if res.Metadata["mcp_server"] != "mem" || res.Metadata["mcp_tool"] != "echo" {
			t.Errorf("metadata = %v", res.Metadata)
		}
		res = run(t, find(t, m.Tools(), "mcp__mem__fail"), `{}`)
		if !res.IsError || res.TextOf() != "it broke" {
			t.Errorf("fail: %+v", res)
		}
		res = run(t, find(t, m.Tools(), "mcp__mem__big"), ``)
		text := res.TextOf()
		if len(text) > MaxOutput+100 || !strings.Contains(text, "[output truncated: 102400 of 204800 bytes shown]") {
			t.Errorf("big: %d bytes, ends %q", len(text), text[len(text)-60:])
		}
	})
}

func TestMemTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := startMem(t, newMemServer(), Options{})
		start := time.Now()
		res := run(t, find(t, m.Tools(), "mcp__mem__wait"), `{"seconds":600}`)
		if !res.IsError || !strings.Contains(res.TextOf(), `mcp server "mem": tool wait: timed out after 1m0s`) {
			t.Errorf("wait: %+v", res)
		}
		if d := time.Since(start); d != time.Minute {
			t.Errorf("the call ended after %s of fake time, want the 1m timeout", d)
		}
		// The connection survives a timeout.
		if res := run(t, find(t, m.Tools(), "mcp__mem__echo"), `{"text":"again"}`); res.IsError {
			t.Errorf("echo after a timeout: %+v", res)
		}
		// A caller's cancel ends the call too.
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		res, err := find(t, m.Tools(), "mcp__mem__wait").Run(ctx, tool.Call{Input: []byte(`{"seconds":600}`)})
		if err != nil || !res.IsError || !strings.Contains(res.TextOf(), "cancelled") {
			t.Errorf("cancelled call: %+v, %v", res, err)
		}
	})
}

func TestMemReconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemServer()
		m := startMem(t, s, Options{MinBackoff: 10 * time.Second})
		echo := find(t, m.Tools(), "mcp__mem__echo")
		s.drop()
		synctest.Wait()
		if st := statusOf(m, "mem"); st.State != StateReconnecting || st.Tools != 4 {
			t.Fatalf("after a drop: %+v", st)
		}
		// A call made while reconnecting waits for the connection.
		start := time.Now()
		if res := run(t, echo, `{"text":"back"}`); res.IsError || res.TextOf() != "echo: back" {
			t.Errorf("echo across a reconnection: %+v", res)
		}
		if d := time.Since(start); d <= 0 || d > 10*time.Second {
			t.Errorf("the call waited %s, want the backoff (≤10s)", d)
		}
		if st := statusOf(m, "mem"); st.State != StateReady {
			t.Errorf("after reconnecting: %+v", st)
		}
	})
}

func TestMemReconnectWaitGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemServer()
		m := Start(t.Context(), []Server{{Name: "mem", CallTimeout: time.Second, transport: s.transport}},
			Options{MinBackoff: time.Hour})
		defer m.Close()
		echo := find(t, m.Tools(), "mcp__mem__echo")
		s.drop()
		synctest.Wait()
		res := run(t, echo, `{"text":"x"}`)
		if !res.IsError || !strings.Contains(res.TextOf(), `mcp server "mem" is reconnecting; gave up waiting after 1s`) {
			t.Errorf("call while reconnecting: %+v", res)
		}
	})
}

func TestMemFailedFailsFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemServer()
		m := startMem(t, s, Options{MinBackoff: time.Second, MaxBackoff: 4 * time.Second})
		echo := find(t, m.Tools(), "mcp__mem__echo")
		s.refuse.Store(true)
		s.drop()
		time.Sleep(2 * time.Second) // the backoff, then a refused attempt
		synctest.Wait()
		st := statusOf(m, "mem")
		if st.State != StateFailed || st.Err != "connection refused" || st.Tools != 4 {
			t.Fatalf("status = %+v, want failed, keeping its tools", st)
		}
		start := time.Now()
		res := run(t, echo, `{"text":"x"}`)
		if !res.IsError || !strings.Contains(res.TextOf(), `mcp server "mem" is not connected: connection refused`) {
			t.Errorf("call to a failed server: %+v", res)
		}
		if time.Since(start) != 0 {
			t.Error("a call to a failed server waited")
		}
		if _, err := m.ReadResource(t.Context(), "mem", "mem://x"); !errors.Is(err, ErrUnavailable) ||
			strings.HasPrefix(err.Error(), "mcp: ") {
			t.Errorf("ReadResource from a failed server: %v, want ErrUnavailable in words", err)
		}
		// Retries go on in the background, with a growing backoff.
		s.refuse.Store(false)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if st := statusOf(m, "mem"); st.State != StateReady {
			t.Errorf("after the server came back: %+v", st)
		}
		if res := run(t, echo, `{"text":"back"}`); res.IsError {
			t.Errorf("echo: %+v", res)
		}
	})
}

func TestMemListChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemServer()
		changed := make(chan string, 10)
		m := startMem(t, s, Options{OnToolsChanged: func(server string) { changed <- server }})
		echo := find(t, m.Tools(), "mcp__mem__echo")

		mcp.AddTool(s.srv, &mcp.Tool{Name: "new"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "new!"}}}, nil, nil
		})
		if got := <-changed; got != "mem" {
			t.Errorf("OnToolsChanged(%q)", got)
		}
		if res := run(t, find(t, m.Tools(), "mcp__mem__new"), `{}`); res.TextOf() != "new!" {
			t.Errorf("new tool: %+v", res)
		}

		s.srv.RemoveTools("echo")
		<-changed
		for _, n := range names(m.Tools()) {
			if n == "mcp__mem__echo" {
				t.Error("echo still listed after its removal")
			}
		}
		res := run(t, echo, `{"text":"x"}`)
		if !res.IsError || !strings.Contains(res.TextOf(), `no longer offers the tool "echo"`) {
			t.Errorf("removed tool: %+v", res)
		}
	})
}

func TestMemResourcesAndPrompts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemServer()
		s.srv.AddResource(&mcp.Resource{URI: "mem://notes", Name: "notes", MIMEType: "text/plain", Description: "The notes."},
			func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
					{URI: r.Params.URI, Text: "remember the milk"},
					{URI: r.Params.URI, MIMEType: "image/png", Blob: []byte("png")},
				}}, nil
			})
		s.srv.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}},
			func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
					{Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + r.Params.Arguments["who"]}}}}, nil
			})
		m := startMem(t, s, Options{})
		rs, err := m.Resources(t.Context(), "")
		if err != nil || len(rs) != 1 || rs[0] != (Resource{Server: "mem", URI: "mem://notes", Name: "notes", MIMEType: "text/plain", Description: "The notes."}) {
			t.Fatalf("resources: %+v, %v", rs, err)
		}
		text, err := m.ReadResource(t.Context(), "mem", "mem://notes")
		if err != nil || text != "remember the milk\n[binary content of mem://notes: image/png, 3 bytes]" {
			t.Errorf("read: %q, %v", text, err)
		}
		ps, err := m.Prompts(t.Context(), "mem")
		if err != nil || len(ps) != 1 || ps[0].Name != "greet" || len(ps[0].Arguments) != 1 || !ps[0].Arguments[0].Required {
			t.Errorf("prompts: %+v, %v", ps, err)
		}
		p, err := m.GetPrompt(t.Context(), "mem", "greet", map[string]string{"who": "Ada"})
		if err != nil || p != "Say hello to Ada" {
			t.Errorf("prompt: %q, %v", p, err)
		}
		if _, err := m.Resources(t.Context(), "nope"); !errors.Is(err, ErrUnknownServer) {
			t.Errorf("unknown server: %v", err)
		}

		rt := m.ResourceTools()
		if len(rt) != 2 {
			t.Fatalf("resource tools: %v", names(rt))
		}
		if meta := tool.MetaOf(rt[0]); !meta.ReadOnly || meta.Category != tool.CategoryRead {
			t.Errorf("resource tool meta = %+v", meta)
		}
		if got := run(t, rt[0], `{}`).TextOf(); got != "mem: mem://notes — notes (text/plain): The notes.\n" {
			t.Errorf("mcp_list_resources: %q", got)
		}
		if got := run(t, rt[1], `{"server":"mem","uri":"mem://notes"}`).TextOf(); !strings.HasPrefix(got, "remember the milk") {
			t.Errorf("mcp_read_resource: %q", got)
		}
		if res := run(t, rt[1], `{"server":"nope","uri":"x"}`); !res.IsError {
			t.Errorf("read from an unknown server: %+v", res)
		}
	})
}

func TestNoResourceTools(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := startMem(t, newMemServer(), Options{})
		if rt := m.ResourceTools(); rt != nil {
			t.Errorf("ResourceTools without resources = %v", names(rt))
		}
	})
}

func TestConfigErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemServer()
		m := Start(t.Context(), []Server{
			{Name: "mem", transport: s.transport},
			{Name: "", Command: "x"},
			{Name: "m.e.m", Command: "x"},
			{Name: "mem", Command: "x"},
			{Name: "both", Command: "x", URL: "http://127.0.0.1:1/"},
			{Name: "none"},
		}, Options{})
		defer m.Close()
		wantErr := []string{"", "no name", "", "already named", "both command and url", "neither command nor url"}
		for i, st := range m.Status() {
			if i == 0 {
				if st.State != StateReady {
					t.Errorf("mem: %+v", st)
				}
				continue
			}
			if st.State != StateFailed || !strings.Contains(st.Err, wantErr[i]) {
				t.Errorf("server %d: %+v, want failed with %q", i, st, wantErr[i])
			}
		}
		if len(m.Tools()) != 4 {
			t.Errorf("tools = %v", names(m.Tools()))
		}
	})
}

func TestCloseEndsCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := Start(t.Context(), []Server{{Name: "mem", transport: newMemServer().transport}}, Options{})
		wait := find(t, m.Tools(), "mcp__mem__wait")
		done := make(chan tool.Result)
		go func() { done <- run(t, wait, `{"seconds":600}`) }()
		synctest.Wait()
		_ = m.Close()
		res := <-done
		if !res.IsError || !strings.Contains(res.TextOf(), "closed") {
			t.Errorf("call at Close: %+v", res)
		}
		if st := statusOf(m, "mem"); st.State != StateClosed {
			t.Errorf("status after Close: %+v", st)
		}
		if res := run(t, wait, `{"seconds":1}`); !res.IsError || !strings.Contains(res.TextOf(), "closed") {
			t.Errorf("call after Close: %+v", res)
		}
	})
}

// TestHTTPHeaders runs a go-sdk server behind httptest (127.0.0.1) and checks
// the configured headers reach it.
func TestHTTPHeaders(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := newMemServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, nil)
	seen := make(chan string, 100)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Get("Authorization")
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	m := Start(t.Context(), []Server{{Name: "web", URL: hs.URL, Headers: map[string]string{"Authorization": "Bearer t0k"}}}, Options{})
	if st := statusOf(m, "web"); st.State != StateReady || st.Transport != "http" {
		t.Fatalf("status = %+v", st)
	}
	if res := run(t, find(t, m.Tools(), "mcp__web__echo"), `{"text":"over http"}`); res.TextOf() != "echo: over http" {
		t.Errorf("echo: %+v", res)
	}
	_ = m.Close()
	n := len(seen)
	for range n {
		if a := <-seen; a != "Bearer t0k" {
			t.Errorf("a request had Authorization %q", a)
		}
	}
	if n == 0 {
		t.Error("no request reached the server")
	}
}

// TestSSE (MCP-1, COMPAT-1) runs a go-sdk server behind its SSE handler
// on 127.0.0.1 — MCP's older HTTP+SSE transport, Claude Code's type
// "sse" — and calls its tools through a manager configured with SSE; the
// configured headers reach both the event stream and the posts. The same
// server does not answer streamable HTTP, so a connection that worked
// used SSE.
func TestSSE(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := newMemServer()
	h := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s.srv }, nil)
	var mu sync.Mutex
	methods := map[string]int{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sse" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		mu.Lock()
		methods[r.Method]++
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	m := Start(t.Context(), []Server{{Name: "legacy", URL: hs.URL, SSE: true, Headers: map[string]string{"Authorization": "Bearer sse"}}}, Options{})
	if st := statusOf(m, "legacy"); st.State != StateReady || st.Transport != "sse" {
		t.Fatalf("status = %+v", st)
	}
	if res := run(t, find(t, m.Tools(), "mcp__legacy__echo"), `{"text":"over sse"}`); res.TextOf() != "echo: over sse" {
		t.Errorf("echo: %s", res.TextOf())
	}
	_ = m.Close()
	mu.Lock()
	defer mu.Unlock()
	if methods["GET"] == 0 || methods["POST"] == 0 {
		t.Errorf("requests by method %v: want the GET event stream and POSTed messages", methods)
	}
}
