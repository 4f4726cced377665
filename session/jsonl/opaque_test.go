package jsonl_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/jsonl"
)

// TestOpaqueRoundTrip: an assistant message holding opaque blocks (a server
// tool's call and result, vendor JSON with <, > and & in it) is stored in
// the log and read back, by a new store, with its raw bytes unchanged — the
// bytes the adapter replays to the provider (PROV-5, issue 23).
func TestOpaqueRoundTrip(t *testing.T) {
	use, _, err := llm.NormalizeOpaque([]byte(`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"a <b> & c"}}`))
	if err != nil {
		t.Fatal(err)
	}
	res, _, _ := llm.NormalizeOpaque([]byte(`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://x.test/?a=1&b=2","encrypted_content":"EqgfCioI\u2028"}]}`))
	m := llm.Message{Role: llm.RoleAssistant, Provider: "anthropic", Model: "claude-sonnet-4-5", Content: []llm.Block{
		&llm.Opaque{Provider: "anthropic", Type: "server_tool_use", Raw: use},
		&llm.Opaque{Provider: "anthropic", Type: "web_search_tool_result", Raw: res},
		&llm.Text{Text: "Found."},
	}}
	dir := t.TempDir()
	st, err := jsonl.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, "s", session.Entry{Kind: session.KindMessage, Message: &m}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	st2, err := jsonl.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	var got *llm.Message
	for e, err := range st2.Entries(ctx, "s", 0) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Message != nil {
			got = e.Message
		}
	}
	if got == nil || len(got.Content) != 3 {
		t.Fatalf("read back %+v", got)
	}
	for i, raw := range [][]byte{use, res} {
		o, ok := got.Content[i].(*llm.Opaque)
		if !ok || !bytes.Equal(o.Raw, raw) || o.Provider != "anthropic" {
			t.Errorf("block %d read back as %#v, want raw %s", i, got.Content[i], raw)
		}
	}
	want, _ := json.Marshal(m)
	again, _ := json.Marshal(got)
	if !bytes.Equal(want, again) {
		t.Errorf("re-encoded differs:\n%s\n%s", want, again)
	}
}
