package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The mock vendor picks each request's turn from its last message — the
// reply after a tool result, else the tool call — and counts the first
// line of the tool result it was given; a body that is not a request is
// refused.
func TestVendorTurns(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
		reply      bool
		line       string
	}{
		{"prompt as a string", `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"What is here?"}]}`, 200, false, ""},
		{"prompt as blocks", `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":[{"type":"text","text":"What is here?"}]}]}`, 200, false, ""},
		{"tool results", `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"What is here?"},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"list_dir","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"a.txt\nb.txt"}]}]}`, 200, true, "a.txt"},
		{"tool result as text blocks", `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1",` +
			`"content":[{"type":"text","text":"hi from under bwrap\nexit 0"}]}]}]}`, 200, true, "hi from under bwrap"},
		{"an earlier run's results, a new prompt", `{"model":"m","max_tokens":100,"messages":[` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"a.txt"}]},` +
			`{"role":"assistant","content":"Done."},{"role":"user","content":"Again?"}]}`, 200, false, ""},
		{"no model", `{"messages":[]}`, 400, false, ""},
		{"not JSON", `{`, 400, false, ""},
	} {
		v := &vendor{turn: toolTurn(toolBash), results: map[string]int{}}
		req := httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader(tc.body))
		req.Header.Set("x-api-key", vendorKey)
		rec := httptest.NewRecorder()
		v.serveHTTP(rec, req)
		body := rec.Body.String()
		if rec.Code != tc.status {
			t.Errorf("%s: status %d, want %d: %s", tc.name, rec.Code, tc.status, body)
			continue
		}
		if tc.status != 200 {
			continue
		}
		if got := strings.Contains(body, "Done."); got != tc.reply {
			t.Errorf("%s: answered with the reply: %v, want %v: %s", tc.name, got, tc.reply, body)
		}
		if !tc.reply && !strings.Contains(body, `"name":"bash"`) {
			t.Errorf("%s: answered without the tool call: %s", tc.name, body)
		}
		want := map[string]int{}
		if tc.reply {
			want[tc.line] = 1
		}
		if got := v.toolResults(); len(got) != len(want) || got[tc.line] != want[tc.line] {
			t.Errorf("%s: tool results %v, want %v", tc.name, got, want)
		}
	}
}
