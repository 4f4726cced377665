package replay

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/llm"
)

func ptr[T any](v T) *T { return &v }

func baseRequest() *llm.Request {
	return &llm.Request{
		Model:  "m1",
		System: "You are <terse> & exact.",
		Messages: []llm.Message{
			llm.UserText("list files"),
			{Role: llm.RoleAssistant, Provider: "scripted", Model: "m1", Content: []llm.Block{
				&llm.Thinking{Text: "look first", Signature: "sig-1"},
				&llm.ToolUse{ID: "c1", Name: "bash", Input: json.RawMessage(`{ "cwd": ".", "cmd": "ls -la" }`)},
			}},
			{Role: llm.RoleUser, Content: []llm.Block{&llm.ToolResult{ToolUseID: "c1", Content: []llm.Block{
				&llm.Text{Text: "a.txt"}, &llm.Image{MediaType: "image/png", Data: []byte("PNGDATA")},
			}}}},
		},
		Tools: []llm.ToolSpec{{Name: "bash", Description: "Runs a command.",
			InputSchema: json.RawMessage(`{"type":"object", "properties":{"cmd":{"type":"string"}}}`)}},
		MaxTokens:     4096,
		Temperature:   ptr(0.2),
		Thinking:      &llm.ThinkingConfig{BudgetTokens: 1024},
		CacheKey:      "session-1",
		StopSequences: []string{"END"},
	}
}

func TestCanonical(t *testing.T) {
	sum := sha256.Sum256([]byte("PNGDATA"))
	want := `{"model":"m1","system":"You are <terse> & exact.","messages":[` +
		`{"role":"user","content":[{"type":"text","text":"list files"}]},` +
		`{"role":"assistant","content":[{"type":"thinking","text":"look first","signature":"sig-1"},` +
		`{"type":"tool_use","id":"c1","name":"bash","input":{"cmd":"ls -la","cwd":"."}}],"provider":"scripted","model":"m1"},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"a.txt"},` +
		`{"type":"image","media_type":"image/png","sha256":"` + hex.EncodeToString(sum[:]) + `","size":7}]}]}],` +
		`"tools":[{"name":"bash","description":"Runs a command.","input_schema":{"properties":{"cmd":{"type":"string"}},"type":"object"}}],` +
		`"max_tokens":4096,"temperature":0.2,"thinking":{"budget_tokens":1024},"stop_sequences":["END"]}`
	got, err := Canonical(baseRequest())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("canonical form (-want +got):\n%s", diff)
	}
	if h := Hash(got); !strings.HasPrefix(h, "sha256:") || len(h) != len("sha256:")+64 {
		t.Errorf("hash = %q", h)
	}
}

// Which changes to a request change its canonical form.
func TestCanonicalSensitivity(t *testing.T) {
	tests := []struct {
		name   string
		change func(r *llm.Request)
		same   bool
	}{
		{"cache key", func(r *llm.Request) { r.CacheKey = "session-2" }, true},
		{"schema key order", func(r *llm.Request) {
			r.Tools[0].InputSchema = json.RawMessage(`{"properties":{"cmd":{"type":"string"}},"type":"object"}`)
		}, true},
		{"tool input spacing", func(r *llm.Request) {
			r.Messages[1].Content[1].(*llm.ToolUse).Input = json.RawMessage(`{"cmd":"ls -la","cwd":"."}`)
		}, true},
		{"same image bytes, new slice", func(r *llm.Request) {
			r.Messages[2].Content[0].(*llm.ToolResult).Content[1] = &llm.Image{MediaType: "image/png", Data: []byte("PNGDATA")}
		}, true},
		{"model", func(r *llm.Request) { r.Model = "m2" }, false},
		{"system", func(r *llm.Request) { r.System = "" }, false},
		{"temperature", func(r *llm.Request) { r.Temperature = nil }, false},
		{"max tokens", func(r *llm.Request) { r.MaxTokens = 1 }, false},
		{"thinking", func(r *llm.Request) { r.Thinking = &llm.ThinkingConfig{Effort: "high"} }, false},
		{"stop sequences", func(r *llm.Request) { r.StopSequences = nil }, false},
		{"signature", func(r *llm.Request) { r.Messages[1].Content[0].(*llm.Thinking).Signature = "sig-2" }, false},
		{"stamp", func(r *llm.Request) { r.Messages[1].Model = "m2" }, false},
		{"image bytes", func(r *llm.Request) {
			r.Messages[2].Content[0].(*llm.ToolResult).Content[1] = &llm.Image{MediaType: "image/png", Data: []byte("PNGDATB")}
		}, false},
		{"tool input value", func(r *llm.Request) {
			r.Messages[1].Content[1].(*llm.ToolUse).Input = json.RawMessage(`{"cmd":"ls","cwd":"."}`)
		}, false},
	}
	base, err := Canonical(baseRequest())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := baseRequest()
			tt.change(r)
			got, err := Canonical(r)
			if err != nil {
				t.Fatal(err)
			}
			if same := string(got) == string(base); same != tt.same {
				t.Errorf("same = %v, want %v\n%s", same, tt.same, got)
			}
		})
	}
}

// Apart from images, a canonical message is the JSON of llm.Message, so the
// two never drift apart.
func TestCanonicalMessagesAreLLMJSON(t *testing.T) {
	r := baseRequest()
	r.Messages = r.Messages[:2]
	r.Messages[1].Content[1].(*llm.ToolUse).Input = json.RawMessage(`{"cmd":"ls -la","cwd":"."}`)
	r.Messages = append(r.Messages, llm.Message{Role: llm.RoleUser, Content: []llm.Block{
		&llm.ToolResult{ToolUseID: "c1", IsError: true, Content: []llm.Block{&llm.Text{Text: "boom"}}},
		&llm.Thinking{Redacted: true, Signature: "opaque", ID: "rs_1"},
		&llm.ToolUse{ID: "c2", Name: "x", Signature: "ts"},
	}}, llm.Message{Role: llm.RoleAssistant, Provider: "anthropic", Model: "m", Content: []llm.Block{
		&llm.Opaque{Provider: "anthropic", Type: "web_search_tool_result", Raw: json.RawMessage(`{"type":"web_search_tool_result","tool_use_id":"s","content":[]}`)},
	}})
	canon, err := Canonical(r)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Messages []any }
	if err := json.Unmarshal(canon, &got); err != nil {
		t.Fatal(err)
	}
	var want []any
	raw, _ := json.Marshal(r.Messages)
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got.Messages); diff != "" {
		t.Errorf("canonical messages vs llm JSON (-llm +canonical):\n%s", diff)
	}
}

func TestCanonJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b":1,"a":{"d":[1,2.50,{"z":true,"y":null}],"c":"<&>"}}`, `{"a":{"c":"<&>","d":[1,2.50,{"y":null,"z":true}]},"b":1}`},
		{" \n{ } ", `{}`},
		{`12345678901234567890123`, `12345678901234567890123`},
		{`{"a":1} {"b":2}`, `"{\"a\":1} {\"b\":2}"`},
		{`{"a":`, `"{\"a\":"`},
		{`"x"`, `"x"`},
	}
	for _, tt := range tests {
		got := string(canonJSON(json.RawMessage(tt.in)))
		if got != tt.want {
			t.Errorf("canonJSON(%s) = %s, want %s", tt.in, got, tt.want)
		}
		if again := string(canonJSON(json.RawMessage(got))); again != got {
			t.Errorf("canonJSON is not idempotent on %s: %s", got, again)
		}
	}
}

func TestCanonicalRejectsNilBlock(t *testing.T) {
	r := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser}, {Role: llm.RoleUser, Content: []llm.Block{nil}}}}
	_, err := Canonical(r)
	if err == nil || !strings.Contains(err.Error(), "messages[1]: content[0]: nil block") {
		t.Errorf("err = %v", err)
	}
}

// A recorded request, re-read from its JSON, gives the same canonical bytes
// even when edited by hand (spacing, key order).
func TestParseCanon(t *testing.T) {
	canon, err := Canonical(baseRequest())
	if err != nil {
		t.Fatal(err)
	}
	again, err := parseCanon(canon)
	if err != nil || string(again) != string(canon) {
		t.Fatalf("parseCanon = %s, %v", again, err)
	}
	edited := `{ "system":"s", "model":"m", "messages":[ {"content":[{"input":{"b":1, "a":2},"type":"tool_use"}],"role":"assistant"} ] }`
	got, err := parseCanon(json.RawMessage(edited))
	want := `{"model":"m","system":"s","messages":[{"role":"assistant","content":[{"type":"tool_use","input":{"a":2,"b":1}}]}]}`
	if err != nil || string(got) != want {
		t.Errorf("parseCanon(edited) = %s, %v; want %s", got, err, want)
	}
	if _, err := parseCanon(json.RawMessage(`{"model":"m","cache_key":"s"}`)); err == nil || !strings.Contains(err.Error(), "cache_key") {
		t.Errorf("unknown field: err = %v", err)
	}
}
