package mockserver

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/vendorhttp"
)

func TestOpenAIChatDecode(t *testing.T) {
	png := []byte("\x89PNG\r\n")
	temp := 0.2
	cases := []struct {
		name    string
		body    string
		want    *llm.Request
		stream  bool
		wantErr string
	}{
		{
			name:   "string content",
			body:   `{"model":"gpt-4.1","stream":true,"max_tokens":10,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}`,
			stream: true,
			want: &llm.Request{Model: "gpt-4.1", MaxTokens: 10, System: "be brief",
				Messages: []llm.Message{llm.UserText("hi")}},
		},
		{
			name: "every block kind",
			body: `{"model":"gpt-4.1","max_completion_tokens":4096,"temperature":0.2,"reasoning_effort":"high","prompt_cache_key":"sess",
				"stop":"END","tools":[{"type":"function","function":{"name":"read","description":"Read.","parameters":{"type":"object"}}}],
				"messages":[
				{"role":"developer","content":[{"type":"text","text":"sys"}]},
				{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0K"}},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]},
				{"role":"assistant","content":null,"reasoning_content":"hmm","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a\"}"}},
					{"id":"c2","type":"function","function":{"name":"read","arguments":""}}]},
				{"role":"tool","tool_call_id":"c1","content":"[error] boom"},
				{"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"plain"}]},
				{"role":"user","content":"next"},
				{"role":"assistant","content":"ok","reasoning":"r","reasoning_details":[{"type":"reasoning.text","signature":"s"}]}]}`,
			want: &llm.Request{Model: "gpt-4.1", MaxTokens: 4096, System: "sys", Temperature: &temp, CacheKey: "sess",
				StopSequences: []string{"END"}, Thinking: &llm.ThinkingConfig{Effort: "high"},
				Tools: []llm.ToolSpec{{Name: "read", Description: "Read.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
				Messages: []llm.Message{
					{Role: llm.RoleUser, Content: []llm.Block{&llm.Text{Text: "look"}, &llm.Image{MediaType: "image/png", Data: png}, &llm.Image{URL: "https://x/y.png"}}},
					{Role: llm.RoleAssistant, Content: []llm.Block{&llm.Thinking{Text: "hmm"},
						&llm.ToolUse{ID: "c1", Name: "read", Input: json.RawMessage(`{"path":"a"}`)},
						&llm.ToolUse{ID: "c2", Name: "read", Input: json.RawMessage(`{}`)}}},
					{Role: llm.RoleUser, Content: []llm.Block{
						&llm.ToolResult{ToolUseID: "c1", IsError: true, Content: []llm.Block{&llm.Text{Text: "boom"}}},
						&llm.ToolResult{ToolUseID: "c2", Content: []llm.Block{&llm.Text{Text: "plain"}}},
						&llm.Text{Text: "next"}}},
					{Role: llm.RoleAssistant, Content: []llm.Block{
						&llm.Thinking{Text: "r", Signature: `[{"type":"reasoning.text","signature":"s"}]`}, &llm.Text{Text: "ok"}}},
				}},
		},
		{name: "no model", body: `{"messages":[{"role":"user","content":"x"}]}`, wantErr: "model"},
		{name: "no messages", body: `{"model":"m","messages":[]}`, wantErr: "at least one message"},
		{name: "tool without a call", body: `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"c9","content":"r"}]}`, wantErr: "preceding message with 'tool_calls'"},
		{name: "unanswered call", body: `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"a","arguments":"{}"}}]},{"role":"user","content":"x"}]}`, wantErr: "responding to each 'tool_call_id'"},
		{name: "unknown role", body: `{"model":"m","messages":[{"role":"robot","content":"x"}]}`, wantErr: "robot"},
		{name: "unknown part", body: `{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio"}]}]}`, wantErr: "input_audio"},
		{name: "bad image", body: `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png,raw"}}]}]}`, wantErr: "base64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, stream, err := (&openAIChat{}).decode([]byte(c.body))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if stream != c.stream {
				t.Errorf("stream = %v, want %v", stream, c.stream)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOpenAIErrorBody checks the error JSON both OpenAI APIs share, and that
// rein classifies it as OpenAI's own errors are classified (PROV-7).
func TestOpenAIErrorBody(t *testing.T) {
	cases := []struct {
		name   string
		status int
		fault  Fault
		want   string
		kind   llm.ErrorKind
	}{
		{"context overflow", 400, Fault{ContextOverflow: true},
			`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			llm.KindContextOverflow},
		{"rate limit", 429, Fault{}, `{"error":{"message":"Rate limit exceeded, please slow down","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, llm.KindRateLimit},
		{"bad key", 401, Fault{}, `{"error":{"message":"Incorrect API key provided: sk-mock***. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, llm.KindAuth},
		{"unknown model", 404, Fault{Message: "The model `gpt-9` does not exist or you do not have access to it."},
			"{\"error\":{\"message\":\"The model `gpt-9` does not exist or you do not have access to it.\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"model_not_found\"}}", llm.KindNotFound},
		{"server", 500, Fault{}, `{"error":{"message":"Internal Server Error","type":"server_error","param":null,"code":null}}`, llm.KindServer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := openAIErrorBody(c.status, &c.fault)
			if string(got) != c.want {
				t.Errorf("body\n got: %s\nwant: %s", got, c.want)
			}
			if k := vendorhttp.FromHTTP("openai", c.status, nil, got).Kind; k != c.kind {
				t.Errorf("classified as %v, want %v", k, c.kind)
			}
		})
	}
}

// postOpenAI sends body to the server's path and returns the reply's data lines.
func postOpenAI(t *testing.T, s *Server, path, body string) (*http.Response, []string) {
	t.Helper()
	res, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(res.Body)
		return res, []string{string(b)}
	}
	var lines []string
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			lines = append(lines, l)
		}
	}
	return res, lines
}

func TestOpenAIChatReply(t *testing.T) {
	turn := Turn{Thinking: "hm", Text: "Hi!", ToolCalls: []ToolCall{{ID: "call_x", Name: "ls", Input: `{"p":1}`}},
		Usage: llm.Usage{InputTokens: 10, CacheReadTokens: 5, OutputTokens: 7, ReasoningTokens: 2}}
	const usage = `"usage":{"prompt_tokens":15,"completion_tokens":7,"total_tokens":22,"prompt_tokens_details":{"cached_tokens":5,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":2,"audio_tokens":0}}`
	cases := []struct {
		name  string
		body  string
		turn  Turn
		want  []string // substrings, in order
		never []string
	}{
		{"stream with usage", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`, turn,
			[]string{`"delta":{"role":"assistant","content":""}`, `"reasoning_content":"hm"`, `"content":"Hi!"`,
				`"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"ls","arguments":""}}]`,
				`"tool_calls":[{"index":0,"function":{"arguments":"{\"p\":1}"}}]`, `"finish_reason":"tool_calls"`,
				`"choices":[],` + usage, "data: [DONE]"}, nil},
		{"stream without usage", `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`, Turn{Text: "a", StopReason: llm.StopMaxTokens},
			[]string{`"content":"a"`, `"finish_reason":"length"`, "data: [DONE]"}, []string{`"usage"`}},
		{"signed reasoning, OpenRouter style", `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`, Turn{Thinking: "hm", ThinkingSignature: "SIG", Text: "a"},
			[]string{`"reasoning":"hm","reasoning_details":[{"type":"reasoning.text","text":"hm","format":"unknown","index":0}]`,
				`"reasoning_details":[{"type":"reasoning.text","signature":"SIG","format":"unknown","index":0}]`}, []string{"reasoning_content"}},
		{"cut before the end", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`,
			Turn{Text: "a", Fault: &Fault{CutBeforeFinal: true}}, []string{`"content":"a"`}, []string{"finish_reason\":\"", "usage", "[DONE]"}},
		{"not streamed", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, turn,
			[]string{`"object":"chat.completion"`, `"message":{"role":"assistant","content":"Hi!","reasoning_content":"hm","tool_calls":[{"id":"call_x","type":"function","function":{"name":"ls","arguments":"{\"p\":1}"}}],"refusal":null}`,
				`"finish_reason":"tool_calls"`, usage}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New()
			defer s.Close()
			s.ChunkSize = 100
			s.Enqueue(c.turn)
			_, lines := postOpenAI(t, s, "/v1/chat/completions", c.body)
			all := strings.Join(lines, "\n")
			rest := all
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("reply lacks %s (in order) in:\n%s", w, all)
				}
				rest = rest[i+len(w):]
			}
			for _, n := range c.never {
				if strings.Contains(all, n) {
					t.Errorf("reply has %s:\n%s", n, all)
				}
			}
		})
	}
}

// TestFramingFaultsPROV2: the BOM fault starts a reply, streamed or plain,
// with a UTF-8 byte-order mark; the KeepAlive fault sends an empty-data
// event before every event, with and without the space after the colon.
func TestFramingFaultsPROV2(t *testing.T) {
	const stream = `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`
	const plain = `{"model":"m","messages":[{"role":"user","content":"x"}]}`
	for _, c := range []struct {
		name, body string
		fault      Fault
		prefix     string
		count      string // appears this many times
		n          int
	}{
		{"BOM, stream", stream, Fault{BOM: true}, "\xEF\xBB\xBFdata: {", "\xEF\xBB\xBF", 1},
		{"BOM, plain", plain, Fault{BOM: true}, "\xEF\xBB\xBF{", "\xEF\xBB\xBF", 1},
		{"keep-alives", stream, Fault{KeepAlive: true}, "data:\n\ndata: {", "data: \n\n", 3}, // 7 events
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New()
			defer s.Close()
			s.ChunkSize = 1
			f := c.fault
			s.Enqueue(Turn{Text: "abcd", Fault: &f})
			res, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if !strings.HasPrefix(string(b), c.prefix) || strings.Count(string(b), c.count) != c.n {
				t.Errorf("reply %q: want it to start with %q and hold %q %d times", b, c.prefix, c.count, c.n)
			}
		})
	}
}
