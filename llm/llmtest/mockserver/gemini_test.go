package mockserver

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/vendorhttp"
)

func TestGeminiDecode(t *testing.T) {
	temp := 0.3
	cases := []struct {
		name string
		body string
		want *llm.Request
		err  string
	}{
		{
			name: "conversation",
			body: `{
			  "systemInstruction": {"role": "user", "parts": [{"text": "be brief"}]},
			  "contents": [
			    {"role": "user", "parts": [{"text": "look"}, {"inlineData": {"mimeType": "image/png", "data": "AAEC"}}, {"fileData": {"mimeType": "image/jpeg", "fileUri": "https://x/y.jpg"}}]},
			    {"role": "model", "parts": [
			      {"text": "hm", "thought": true, "thoughtSignature": "c2ln"},
			      {"text": "ok"},
			      {"functionCall": {"id": "c1", "name": "ls", "args": {"path": "."}}, "thoughtSignature": "c2ln"},
			      {"functionCall": {"name": "now"}}
			    ]},
			    {"role": "user", "parts": [
			      {"functionResponse": {"id": "c1", "name": "ls", "response": {"output": "a b"}}},
			      {"functionResponse": {"name": "now", "response": {"error": "no clock"}}},
			      {"functionResponse": {"name": "now", "response": {"time": 5}}}
			    ]},
			    {"role": "model", "parts": [{"text": "done", "thoughtSignature": "dHh0"}]}
			  ],
			  "tools": [{"functionDeclarations": [{"name": "ls", "description": "List.", "parametersJsonSchema": {"type": "object"}}, {"name": "now", "parameters": {"type": "OBJECT"}}]}],
			  "generationConfig": {"maxOutputTokens": 64, "temperature": 0.3, "stopSequences": ["X"], "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 128}}
			}`,
			want: &llm.Request{
				System: "be brief", MaxTokens: 64, Temperature: &temp, StopSequences: []string{"X"},
				Thinking: &llm.ThinkingConfig{BudgetTokens: 128},
				Tools: []llm.ToolSpec{
					{Name: "ls", Description: "List.", InputSchema: json.RawMessage(`{"type": "object"}`)},
					{Name: "now", InputSchema: json.RawMessage(`{"type": "OBJECT"}`)},
				},
				Messages: []llm.Message{
					{Role: llm.RoleUser, Content: []llm.Block{&llm.Text{Text: "look"}, &llm.Image{MediaType: "image/png", Data: []byte{0, 1, 2}}, &llm.Image{MediaType: "image/jpeg", URL: "https://x/y.jpg"}}},
					{Role: llm.RoleAssistant, Content: []llm.Block{
						&llm.Thinking{Text: "hm", Signature: "c2ln"},
						&llm.Text{Text: "ok"},
						&llm.ToolUse{ID: "c1", Name: "ls", Input: json.RawMessage(`{"path": "."}`), Signature: "c2ln"},
						&llm.ToolUse{Name: "now", Input: json.RawMessage(`{}`)},
					}},
					{Role: llm.RoleUser, Content: []llm.Block{
						&llm.ToolResult{ToolUseID: "c1", Content: []llm.Block{&llm.Text{Text: "a b"}}},
						&llm.ToolResult{Content: []llm.Block{&llm.Text{Text: "no clock"}}, IsError: true},
						&llm.ToolResult{Content: []llm.Block{&llm.Text{Text: `{"time":5}`}}},
					}},
					{Role: llm.RoleAssistant, Content: []llm.Block{&llm.Thinking{Signature: "dHh0"}, &llm.Text{Text: "done"}}},
				},
			},
		},
		{
			name: "thinking level",
			body: `{"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": {"thinkingConfig": {"includeThoughts": true, "thinkingLevel": "HIGH"}}}`,
			want: &llm.Request{Thinking: &llm.ThinkingConfig{Effort: "high"}, Messages: []llm.Message{llm.UserText("hi")}},
		},
		{name: "unknown role", body: `{"contents": [{"role": "system", "parts": [{"text": "x"}]}]}`, err: "unknown role"},
		{name: "bad base64", body: `{"contents": [{"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": "!!"}}]}]}`, err: "inlineData"},
		{name: "empty part", body: `{"contents": [{"role": "user", "parts": [{}]}]}`, err: "no data"},
		{name: "not JSON", body: `{`, err: "unexpected end"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, stream, err := geminiHandler{}.decode([]byte(c.body))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error = %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil || stream {
				t.Fatalf("decode: stream %v, err %v", stream, err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGeminiErrorBody checks the error bodies and that rein's classifier
// reads them as the real ones (PROV-7).
func TestGeminiErrorBody(t *testing.T) {
	cases := []struct {
		name   string
		status int
		fault  Fault
		want   string
		kind   llm.ErrorKind
		retry  time.Duration
	}{
		{"retry info", 429, Fault{Status: 429, Message: "Quota exceeded for metric", RetryDelay: "7s"},
			`{"error":{"code":429,"message":"Quota exceeded for metric","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}}`,
			llm.KindRateLimit, 7 * time.Second},
		{"overflow", 400, Fault{ContextOverflow: true},
			`{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`,
			llm.KindContextOverflow, 0},
		{"default message", 503, Fault{Status: 503},
			`{"error":{"code":503,"message":"Service Unavailable","status":"UNAVAILABLE"}}`,
			llm.KindOverloaded, 0},
		{"unknown status", 418, Fault{Status: 418, Message: "teapot"},
			`{"error":{"code":418,"message":"teapot","status":"UNKNOWN"}}`,
			llm.KindBadRequest, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := geminiHandler{}.errorBody(c.status, &c.fault)
			if diff := cmp.Diff(c.want, string(body)); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			e := vendorhttp.FromHTTP("google", c.status, nil, body)
			if e.Kind != c.kind || e.RetryAfter != c.retry {
				t.Errorf("classified as %v retry %v, want %v retry %v", e.Kind, e.RetryAfter, c.kind, c.retry)
			}
		})
	}
}

func post(t *testing.T, s *Server, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-goog-api-key", "k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const geminiHello = `{"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}`

// TestGeminiStream reads a streamed reply as raw SSE: data lines only, the
// text and thoughts in pieces, signatures on the last thought and the first
// call, finishReason and usage on the last chunk alone.
func TestGeminiStream(t *testing.T) {
	s := New()
	defer s.Close()
	s.APIKey, s.ChunkSize = "k", 3
	s.Enqueue(Turn{Thinking: "plan it", ThinkingSignature: "c2ln", Text: "calling",
		ToolCalls: []ToolCall{{ID: "ignored", Name: "a", Input: `{"x":1}`}, {Name: "b"}},
		Usage:     llm.Usage{InputTokens: 10, CacheReadTokens: 5, OutputTokens: 8, ReasoningTokens: 3}})
	resp := post(t, s, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", geminiHello)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, ct)
	}
	var chunks []gemResponse
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not a data line", line)
		}
		var c gemResponse
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, c)
	}
	var thought, text strings.Builder
	var calls []gemPart
	for i, c := range chunks {
		last := i == len(chunks)-1
		cand := c.Candidates[0]
		if (cand.FinishReason != "") != last || (c.UsageMetadata != nil) != last {
			t.Errorf("chunk %d: finishReason %q, usage %v", i, cand.FinishReason, c.UsageMetadata)
		}
		for _, p := range cand.Content.Parts {
			switch {
			case p.Thought:
				thought.WriteString(p.Text)
				if want := map[bool]string{true: "c2ln"}[strings.HasSuffix(thought.String(), "it")]; p.ThoughtSignature != want {
					t.Errorf("thought %q signed %q, want %q", p.Text, p.ThoughtSignature, want)
				}
			case p.FunctionCall != nil:
				calls = append(calls, p)
			default:
				text.WriteString(p.Text)
			}
		}
	}
	if thought.String() != "plan it" || text.String() != "calling" {
		t.Errorf("thought %q, text %q", thought.String(), text.String())
	}
	wantCalls := []gemPart{
		{FunctionCall: &gemCall{Name: "a", Args: json.RawMessage(`{"x":1}`)}, ThoughtSignature: "c2ln"},
		{FunctionCall: &gemCall{Name: "b", Args: json.RawMessage(`{}`)}},
	}
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("function calls (-want +got):\n%s", diff)
	}
	wantUsage := &gemUsage{PromptTokenCount: 15, CachedContentTokenCount: 5, CandidatesTokenCount: 5, ThoughtsTokenCount: 3, TotalTokenCount: 23}
	if last := chunks[len(chunks)-1]; !cmp.Equal(wantUsage, last.UsageMetadata) || last.Candidates[0].FinishReason != "STOP" {
		t.Errorf("last chunk: usage %+v, finish %q", last.UsageMetadata, last.Candidates[0].FinishReason)
	}
	if r := s.Requests()[0]; !r.Stream || r.Decoded.Model != "gemini-2.5-pro" {
		t.Errorf("logged stream %v model %q", r.Stream, r.Decoded.Model)
	}
}

// TestGeminiGenerateContent checks the plain reply: one response, the
// pieces joined into whole parts.
func TestGeminiGenerateContent(t *testing.T) {
	s := New()
	defer s.Close()
	s.ChunkSize = 2
	s.Enqueue(Turn{Thinking: "abcde", ThinkingSignature: "c2ln", Text: "hello", StopReason: llm.StopRefusal})
	resp := post(t, s, "/v1beta/models/m:generateContent", geminiHello)
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var got gemResponse
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	want := gemContent{Role: "model", Parts: []gemPart{{Text: "abcde", Thought: true, ThoughtSignature: "c2ln"}, {Text: "hello"}}}
	if diff := cmp.Diff(want, *got.Candidates[0].Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if got.Candidates[0].FinishReason != "SAFETY" {
		t.Errorf("finishReason = %q, want SAFETY", got.Candidates[0].FinishReason)
	}
}

func TestGeminiWrongKey(t *testing.T) {
	s := New()
	defer s.Close()
	s.APIKey = "right"
	resp := post(t, s, "/v1beta/models/m:streamGenerateContent?alt=sse", geminiHello)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 401 || !strings.Contains(string(body), `"status":"UNAUTHENTICATED"`) {
		t.Errorf("status %d body %s", resp.StatusCode, body)
	}
}
