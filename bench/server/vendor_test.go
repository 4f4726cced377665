package main

import "testing"

// The mock vendor picks each request's turn from its last message, and
// keeps the first line of the tool result it was given.
func TestToolResult(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       bool
		line       string
	}{
		{"prompt as a string", `{"messages":[{"role":"user","content":"What is here?"}]}`, false, ""},
		{"prompt as blocks", `{"messages":[{"role":"user","content":[{"type":"text","text":"What is here?"}]}]}`, false, ""},
		{"tool results", `{"messages":[{"role":"user","content":"What is here?"},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"list_dir","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"a.txt\nb.txt"}]}]}`, true, "a.txt"},
		{"tool result as text blocks", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1",` +
			`"content":[{"type":"text","text":"hi from under bwrap\nexit 0"}]}]}]}`, true, "hi from under bwrap"},
		{"an earlier run's results, a new prompt", `{"messages":[` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"a.txt"}]},` +
			`{"role":"assistant","content":"Done."},{"role":"user","content":"Again?"}]}`, false, ""},
		{"no messages", `{}`, false, ""},
		{"not JSON", `{`, false, ""},
	} {
		line, got := toolResult([]byte(tc.body))
		if got != tc.want || line != tc.line {
			t.Errorf("%s: toolResult = %q, %v; want %q, %v", tc.name, line, got, tc.line, tc.want)
		}
	}
}
