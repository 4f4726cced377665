package main

import "testing"

// The mock vendor picks each request's turn from its last message.
func TestAnswersTools(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       bool
	}{
		{"prompt as a string", `{"messages":[{"role":"user","content":"What is here?"}]}`, false},
		{"prompt as blocks", `{"messages":[{"role":"user","content":[{"type":"text","text":"What is here?"}]}]}`, false},
		{"tool results", `{"messages":[{"role":"user","content":"What is here?"},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"list_dir","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"a.txt"}]}]}`, true},
		{"an earlier run's results, a new prompt", `{"messages":[` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"a.txt"}]},` +
			`{"role":"assistant","content":"Done."},{"role":"user","content":"Again?"}]}`, false},
		{"no messages", `{}`, false},
		{"not JSON", `{`, false},
	} {
		if got := answersTools([]byte(tc.body)); got != tc.want {
			t.Errorf("%s: answersTools = %v, want %v", tc.name, got, tc.want)
		}
	}
}
