package httphook_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/hook/httphook"
)

func toolInput(tool, cmd string) hook.Input {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return hook.Input{SessionID: "s1", RunID: "r1", Event: hook.PreToolUse, ToolName: tool, ToolInput: in}
}

// HOOK-3: an HTTP hook POSTs the input and reads the reply like a command
// hook's stdout.
func TestHTTP_HOOK3(t *testing.T) {
	// A request abandoned by its timeout (/hang) may still be in its
	// handler when the next one arrives: the handler's record is guarded.
	var mu sync.Mutex
	var got hook.Input
	var header string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var in hook.Input
		_ = json.Unmarshal(body, &in)
		mu.Lock()
		header, got = r.Header.Get("X-Token"), in
		mu.Unlock()
		switch r.URL.Path {
		case "/block":
			_, _ = io.WriteString(w, `{"decision":"block","reason":"frozen branch"}`)
		case "/context":
			_, _ = io.WriteString(w, "remember the style guide")
		case "/empty":
		case "/fail":
			http.Error(w, "boom", http.StatusInternalServerError)
		case "/hang":
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	cases := []struct {
		path    string
		event   hook.Event
		want    hook.Outcome
		wantErr string
	}{
		{"/block", hook.PreToolUse, hook.Outcome{Decision: hook.DecisionBlock, Reason: "frozen branch"}, ""},
		{"/context", hook.UserPromptSubmit, hook.Outcome{AdditionalContext: "remember the style guide"}, ""},
		{"/empty", hook.PreToolUse, hook.Outcome{}, ""},
		{"/fail", hook.PreToolUse, hook.Outcome{}, "status 500: boom"},
		{"/hang", hook.PreToolUse, hook.Outcome{}, "hook timed out"},
	}
	for _, c := range cases {
		h := &hook.HTTP{Poster: httphook.Client{}, URL: srv.URL + c.path, Headers: map[string]string{"X-Token": "t"}, Timeout: 200 * time.Millisecond}
		in := toolInput("bash", "git push")
		in.Event = c.event
		o, err := h.Run(context.Background(), in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want %q", c.path, err, c.wantErr)
			}
			if c.path == "/hang" && !errors.Is(err, hook.ErrTimeout) {
				t.Errorf("%s: error %v is not hook.ErrTimeout", c.path, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
		}
		if diff := cmp.Diff(c.want, o); diff != "" {
			t.Errorf("%s: -want +got:\n%s", c.path, diff)
		}
		mu.Lock()
		gotIn, gotHeader := got, header
		mu.Unlock()
		if gotIn.ToolName != "bash" || gotIn.Event != c.event || gotHeader != "t" {
			t.Errorf("%s: server got %+v, header %q", c.path, gotIn, gotHeader)
		}
	}
	// Through a registry a failing HTTP hook is skipped.
	reg := hook.NewRegistry(hook.Options{})
	_ = reg.Register(hook.Registration{Event: hook.PreToolUse, Hook: &hook.HTTP{Poster: httphook.Client{}, URL: srv.URL + "/fail"}},
		hook.Registration{Event: hook.PreToolUse, Hook: &hook.HTTP{Poster: httphook.Client{}, URL: srv.URL + "/block"}})
	o, err := reg.Fire(context.Background(), hook.PreToolUse, toolInput("bash", "x"))
	if err != nil || !o.Blocked() || o.Reason != "frozen branch" {
		t.Errorf("registry: %+v, %v", o, err)
	}
}

// PERM-5: an HTTP hook's headers carry the variables the hook names and
// nothing of any other: a reference to an unnamed one is left empty.
func TestHTTPHeaders_PERM5(t *testing.T) {
	var mu sync.Mutex
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Clone()
		mu.Unlock()
		_, _ = io.WriteString(w, "")
	}))
	defer srv.Close()
	env := map[string]string{"HOOK_TOKEN": "tok", "ANTHROPIC_API_KEY": "sk-ant"}
	h := &hook.HTTP{Poster: httphook.Client{}, URL: srv.URL, PassEnv: []string{"HOOK_TOKEN"}, Getenv: func(k string) string { return env[k] },
		Headers: map[string]string{
			"Authorization": "Bearer $HOOK_TOKEN",
			"X-Both":        "${HOOK_TOKEN}:${ANTHROPIC_API_KEY}",
			"X-Leak":        "$ANTHROPIC_API_KEY",
			"X-Plain":       "no variables",
		}}
	if _, err := h.Run(context.Background(), toolInput("bash", "ls")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for k, want := range map[string]string{"Authorization": "Bearer tok", "X-Both": "tok:", "X-Leak": "", "X-Plain": "no variables"} {
		if v := got.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
}
