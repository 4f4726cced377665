package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// Harness describes an adapter to [RunConformance].
type Harness struct {
	// Vendor is the wire format the adapter speaks.
	Vendor mockserver.Vendor
	// Provider is the name the adapter stamps on its replies.
	Provider string
	// Model and OtherModel are two model names; replies produced by Model are
	// sent back to OtherModel to check that reasoning is downgraded (PROV-5).
	Model, OtherModel string
	// New returns the adapter pointed at the mock server's base URL (no path)
	// with the given API key.
	New func(baseURL, apiKey string) llm.Provider
	// ReportsCacheWrites is set for vendors that report cache-write tokens.
	ReportsCacheWrites bool
	// StopReasons lists the stop reasons the vendor can express.
	StopReasons []llm.StopReason
	// WholeToolArguments is set for vendors that send a tool call's
	// arguments in one piece (the Gemini Developer API).
	WholeToolArguments bool
}

const testKey = "test-key-123"

// RunConformance runs the provider conformance suite (SPEC PROV-1, PROV-2,
// PROV-5, PROV-7, PROV-9) against h's adapter and the mock vendor server.
func RunConformance(t *testing.T, h Harness) {
	t.Run("Text", func(t *testing.T) { testText(t, h) })
	t.Run("ParallelToolCalls", func(t *testing.T) { testToolCalls(t, h) })
	t.Run("ThinkingReplay", func(t *testing.T) { testThinking(t, h) })
	t.Run("ImageInput", func(t *testing.T) { testImage(t, h) })
	t.Run("ToolResults", func(t *testing.T) { testToolResults(t, h) })
	t.Run("Usage", func(t *testing.T) { testUsage(t, h) })
	t.Run("StopReasons", func(t *testing.T) { testStopReasons(t, h) })
	t.Run("CancelMidStream", func(t *testing.T) { testCancel(t, h) })
	t.Run("Faults", func(t *testing.T) { testFaults(t, h) })
	t.Run("PROV-2 framing", func(t *testing.T) { testFraming(t, h) })
	t.Run("RetryingRecovers", func(t *testing.T) { testRetrying(t, h) })
	t.Run("ValidateAuth", func(t *testing.T) { testValidateAuth(t, h) })
	t.Run("MissingKey", func(t *testing.T) { testMissingKey(t, h) })
}

func start(t *testing.T, chunk int) *mockserver.Server {
	t.Helper()
	s := mockserver.New()
	s.APIKey = testKey
	s.ChunkSize = chunk
	t.Cleanup(s.Close)
	return s
}

func (h Harness) request(msgs ...llm.Message) *llm.Request {
	return &llm.Request{Model: h.Model, System: "You are a test.", Messages: msgs, MaxTokens: 4096}
}

// collect drains a stream into its deltas, response and error.
func collect(t *testing.T, p llm.Provider, req *llm.Request) ([]llm.Delta, *llm.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var ds []llm.Delta
	for d, err := range p.Stream(ctx, req) {
		if err != nil {
			return ds, nil, err
		}
		ds = append(ds, d)
		if d.Kind == llm.DeltaDone {
			return ds, d.Response, nil
		}
	}
	return ds, nil, llm.ErrNoResponse
}

func mustComplete(t *testing.T, p llm.Provider, req *llm.Request) ([]llm.Delta, *llm.Response) {
	t.Helper()
	ds, resp, err := collect(t, p, req)
	if err != nil {
		t.Fatalf("stream failed: %v", err)
	}
	return ds, resp
}

func lastDecoded(t *testing.T, s *mockserver.Server) *llm.Request {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) == 0 {
		t.Fatal("the mock server received no request")
	}
	r := reqs[len(reqs)-1]
	if r.Decoded == nil {
		t.Fatalf("mock could not decode the request: %v\nbody: %s", r.DecodeErr, r.Body)
	}
	return r.Decoded
}

func testText(t *testing.T, h Harness) {
	s := start(t, 3)
	const text = "Hello, world! Streaming works, even with ünïcödé and 中文."
	s.Enqueue(mockserver.Turn{Text: text})
	ds, resp := mustComplete(t, h.New(s.URL, testKey), h.request(llm.UserText("hi")))
	var got strings.Builder
	n := 0
	for _, d := range ds {
		if d.Kind == llm.DeltaText {
			got.WriteString(d.Text)
			n++
		}
	}
	if got.String() != text {
		t.Errorf("streamed text = %q, want %q", got.String(), text)
	}
	if n < 2 {
		t.Errorf("text arrived in %d deltas; want it streamed in pieces", n)
	}
	if resp.Message.TextOf() != text {
		t.Errorf("final message text = %q, want %q", resp.Message.TextOf(), text)
	}
	if resp.StopReason != llm.StopEndTurn {
		t.Errorf("stop reason = %q, want end_turn", resp.StopReason)
	}
	if resp.Message.Role != llm.RoleAssistant || resp.Message.Provider != h.Provider || resp.Message.Model != h.Model {
		t.Errorf("message stamped role=%q provider=%q model=%q; want assistant/%s/%s",
			resp.Message.Role, resp.Message.Provider, resp.Message.Model, h.Provider, h.Model)
	}
	dec := lastDecoded(t, s)
	if dec.System != "You are a test." {
		t.Errorf("system prompt arrived as %q", dec.System)
	}
	if len(dec.Messages) != 1 || dec.Messages[0].TextOf() != "hi" {
		t.Errorf("messages arrived as %+v", dec.Messages)
	}
}

func testToolCalls(t *testing.T, h Harness) {
	s := start(t, 3)
	calls := []mockserver.ToolCall{
		{ID: "call_a", Name: "read_file", Input: `{"path":"src/main.go","offset":10,"limit":200}`},
		{ID: "call_b", Name: "grep", Input: `{"pattern":"func (a \\*Agent) Run","path":"agent/","output_mode":"content"}`},
		{ID: "call_c", Name: "list_dir", Input: `{}`},
	}
	s.Enqueue(mockserver.Turn{Text: "Let me look.", ToolCalls: calls})
	req := h.request(llm.UserText("look around"))
	req.Tools = []llm.ToolSpec{
		{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "grep", Description: "Search.", InputSchema: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}}}`)},
		{Name: "list_dir", Description: "List.", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)},
	}
	ds, resp := mustComplete(t, h.New(s.URL, testKey), req)
	uses := resp.Message.ToolUses()
	if len(uses) != len(calls) {
		t.Fatalf("got %d tool calls, want %d: %+v", len(uses), len(calls), resp.Message.Content)
	}
	ids := map[string]bool{}
	for i, u := range uses {
		if u.Name != calls[i].Name {
			t.Errorf("call %d name = %q, want %q", i, u.Name, calls[i].Name)
		}
		if !jsonEqual(u.Input, []byte(calls[i].Input)) {
			t.Errorf("call %d input = %s, want %s", i, u.Input, calls[i].Input)
		}
		if u.ID == "" || ids[u.ID] {
			t.Errorf("call %d id %q is empty or repeated", i, u.ID)
		}
		ids[u.ID] = true
	}
	if resp.StopReason != llm.StopToolUse {
		t.Errorf("stop reason = %q, want tool_use", resp.StopReason)
	}
	started, inputs := map[string]bool{}, map[string]int{}
	for _, d := range ds {
		switch d.Kind {
		case llm.DeltaToolStart:
			started[d.ToolUseID] = true
		case llm.DeltaToolInput:
			if !started[d.ToolUseID] {
				t.Errorf("input delta for %q before its start delta", d.ToolUseID)
			}
			inputs[d.ToolUseID]++
		}
	}
	if len(started) != len(calls) {
		t.Errorf("%d tool start deltas, want %d", len(started), len(calls))
	}
	if !h.WholeToolArguments && inputs[uses[1].ID] < 2 {
		t.Errorf("arguments of call 2 arrived in %d pieces; want them streamed", inputs[uses[1].ID])
	}
	if dec := lastDecoded(t, s); len(dec.Tools) != 3 || dec.Tools[0].Name != "read_file" {
		t.Errorf("tools arrived as %+v", dec.Tools)
	}
}

// testThinking checks PROV-5: signed reasoning comes back in the final
// message, replays byte for byte to the same model, and is dropped for another.
func testThinking(t *testing.T, h Harness) {
	s := start(t, 5)
	const sig = "c2lnbmF0dXJlLW9wYXF1ZS1ieXRlcy0xMjM0NQ=="
	s.Enqueue(mockserver.Turn{Thinking: "The user wants a file listed.", ThinkingSignature: sig,
		Text: "Listing.", ToolCalls: []mockserver.ToolCall{{ID: "call_1", Name: "list_dir", Input: `{"path":"."}`}}})
	p := h.New(s.URL, testKey)
	req := h.request(llm.UserText("list"))
	req.Thinking = &llm.ThinkingConfig{BudgetTokens: 2048}
	ds, resp := mustComplete(t, p, req)
	var thinking *llm.Thinking
	for _, b := range resp.Message.Content {
		if th, ok := b.(*llm.Thinking); ok && thinking == nil {
			thinking = th
		}
	}
	if thinking == nil {
		t.Fatalf("no thinking block in %+v", resp.Message.Content)
	}
	if !strings.Contains(thinking.Signature+signaturesOf(resp.Message), sig) {
		t.Errorf("signature not kept: thinking %+v", thinking)
	}
	if thinking.Text != "The user wants a file listed." {
		t.Errorf("thinking text = %q", thinking.Text)
	}
	if !hasKind(ds, llm.DeltaThinking) {
		t.Error("no thinking delta streamed")
	}

	// Same model: every block replays byte for byte.
	follow := []llm.Message{llm.UserText("list"), resp.Message, toolResultFor(resp.Message, "a.go\nb.go")}
	s.Enqueue(mockserver.Turn{Text: "Done."})
	req2 := h.request(follow...)
	req2.Thinking = req.Thinking
	mustComplete(t, p, req2)
	dec := lastDecoded(t, s)
	if len(dec.Messages) < 2 {
		t.Fatalf("decoded history too short: %+v", dec.Messages)
	}
	replayed := dec.Messages[1]
	if diff := cmp.Diff(signedBlocks(resp.Message), signedBlocks(replayed)); diff != "" {
		t.Errorf("signed blocks not replayed byte for byte (-sent +arrived):\n%s", diff)
	}

	// Another model: no reasoning, no signatures.
	s.Enqueue(mockserver.Turn{Text: "Done."})
	req3 := h.request(follow...)
	req3.Model = h.OtherModel
	mustComplete(t, p, req3)
	dec = lastDecoded(t, s)
	for _, m := range dec.Messages {
		for _, b := range m.Content {
			switch b := b.(type) {
			case *llm.Thinking:
				t.Errorf("thinking block sent to another model: %+v", b)
			case *llm.ToolUse:
				if b.Signature != "" {
					t.Errorf("tool-call signature sent to another model: %+v", b)
				}
			}
		}
	}
}

func signaturesOf(m llm.Message) string {
	var b strings.Builder
	for _, u := range m.ToolUses() {
		b.WriteString(u.Signature)
	}
	return b.String()
}

// signedBlocks returns the thinking blocks and tool-call signatures of m.
func signedBlocks(m llm.Message) []string {
	var out []string
	for _, b := range m.Content {
		switch b := b.(type) {
		case *llm.Thinking:
			out = append(out, "thinking:"+b.Text+"|"+b.Signature)
		case *llm.ToolUse:
			if b.Signature != "" {
				out = append(out, "tool_use:"+b.ID+"|"+b.Signature)
			}
		}
	}
	return out
}

func toolResultFor(m llm.Message, text string) llm.Message {
	var blocks []llm.Block
	for _, u := range m.ToolUses() {
		blocks = append(blocks, &llm.ToolResult{ToolUseID: u.ID, Content: []llm.Block{&llm.Text{Text: text}}})
	}
	return llm.Message{Role: llm.RoleUser, Content: blocks}
}

// A 1×1 transparent PNG.
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\x00\x01\x00\x00\x05\x00\x01\r\n-\xb4\x00\x00\x00\x00IEND\xaeB`\x82")

func testImage(t *testing.T, h Harness) {
	s := start(t, 0)
	s.Enqueue(mockserver.Turn{Text: "A dot."})
	msg := llm.Message{Role: llm.RoleUser, Content: []llm.Block{
		&llm.Text{Text: "What is this?"}, &llm.Image{MediaType: "image/png", Data: tinyPNG}}}
	mustComplete(t, h.New(s.URL, testKey), h.request(msg))
	dec := lastDecoded(t, s)
	var img *llm.Image
	for _, m := range dec.Messages {
		for _, b := range m.Content {
			if i, ok := b.(*llm.Image); ok {
				img = i
			}
		}
	}
	if img == nil {
		t.Fatalf("no image arrived: %+v", dec.Messages)
	}
	if img.MediaType != "image/png" || !bytes.Equal(img.Data, tinyPNG) {
		t.Errorf("image arrived as %s with %d bytes; want image/png with the same %d bytes", img.MediaType, len(img.Data), len(tinyPNG))
	}
}

func testToolResults(t *testing.T, h Harness) {
	s := start(t, 0)
	s.Enqueue(mockserver.Turn{Text: "ok"})
	asst := llm.Message{Role: llm.RoleAssistant, Provider: h.Provider, Model: h.Model, Content: []llm.Block{
		&llm.ToolUse{ID: "call_1", Name: "read_file", Input: json.RawMessage(`{"path":"a"}`)},
		&llm.ToolUse{ID: "call_2", Name: "bash", Input: json.RawMessage(`{"command":"false"}`)},
	}}
	results := llm.Message{Role: llm.RoleUser, Content: []llm.Block{
		&llm.ToolResult{ToolUseID: "call_1", Content: []llm.Block{&llm.Text{Text: "1\tpackage a"}}},
		&llm.ToolResult{ToolUseID: "call_2", Content: []llm.Block{&llm.Text{Text: "exit code 1"}}, IsError: true},
	}}
	mustComplete(t, h.New(s.URL, testKey), h.request(llm.UserText("go"), asst, results))
	dec := lastDecoded(t, s)
	var uses []*llm.ToolUse
	var got []*llm.ToolResult
	for _, m := range dec.Messages {
		uses = append(uses, m.ToolUses()...)
		got = append(got, m.ToolResults()...)
	}
	if len(uses) != 2 || len(got) != 2 {
		t.Fatalf("decoded %d calls and %d results, want 2 and 2: %+v", len(uses), len(got), dec.Messages)
	}
	for i, want := range []struct {
		text    string
		isError bool
	}{{"1\tpackage a", false}, {"exit code 1", true}} {
		r := got[i]
		if r.ToolUseID != uses[i].ID {
			t.Errorf("result %d answers %q, want %q", i, r.ToolUseID, uses[i].ID)
		}
		if text := (llm.Message{Content: r.Content}).TextOf(); !strings.Contains(text, want.text) {
			t.Errorf("result %d text = %q, want %q", i, text, want.text)
		}
		if r.IsError != want.isError {
			t.Errorf("result %d is_error = %v, want %v", i, r.IsError, want.isError)
		}
	}
}

func testUsage(t *testing.T, h Harness) {
	s := start(t, 0)
	u := llm.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 50, CacheWriteTokens: 10}
	if !h.ReportsCacheWrites {
		u.CacheWriteTokens = 0
	}
	s.Enqueue(mockserver.Turn{Text: "ok", Usage: u})
	_, resp := mustComplete(t, h.New(s.URL, testKey), h.request(llm.UserText("hi")))
	got := resp.Usage
	if got.PromptTokens() != u.PromptTokens() || got.OutputTokens != u.OutputTokens || got.CacheReadTokens != u.CacheReadTokens {
		t.Errorf("usage = %+v, want %+v (prompt %d)", got, u, u.PromptTokens())
	}
	if h.ReportsCacheWrites && got.CacheWriteTokens != u.CacheWriteTokens {
		t.Errorf("cache writes = %d, want %d", got.CacheWriteTokens, u.CacheWriteTokens)
	}
}

func testStopReasons(t *testing.T, h Harness) {
	for _, want := range h.StopReasons {
		t.Run(string(want), func(t *testing.T) {
			s := start(t, 0)
			turn := mockserver.Turn{Text: "x", StopReason: want}
			if want == llm.StopToolUse {
				turn.ToolCalls = []mockserver.ToolCall{{ID: "call_1", Name: "list_dir", Input: "{}"}}
			}
			s.Enqueue(turn)
			_, resp := mustComplete(t, h.New(s.URL, testKey), h.request(llm.UserText("hi")))
			if resp.StopReason != want {
				t.Errorf("stop reason = %q, want %q", resp.StopReason, want)
			}
		})
	}
}

func testCancel(t *testing.T, h Harness) {
	s := start(t, 1)
	s.Enqueue(mockserver.Turn{Text: strings.Repeat("slow ", 200), Fault: &mockserver.Fault{EventDelay: 20 * time.Millisecond}})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var cancelledAt time.Time
	var final error
	for d, err := range h.New(s.URL, testKey).Stream(ctx, h.request(llm.UserText("hi"))) {
		if err != nil {
			final = err
			break
		}
		if d.Kind == llm.DeltaText && cancelledAt.IsZero() {
			cancelledAt = time.Now()
			cancel()
		}
		if d.Kind == llm.DeltaDone {
			t.Fatal("stream completed although it was cancelled")
		}
	}
	if cancelledAt.IsZero() {
		t.Fatal("no text arrived before the stream ended")
	}
	if el := time.Since(cancelledAt); el > 100*time.Millisecond {
		t.Errorf("stream ended %v after cancel; want < 100ms", el)
	}
	if final != nil && llm.KindOf(final) != llm.KindCancelled {
		t.Errorf("error after cancel = %v (kind %v), want cancelled", final, llm.KindOf(final))
	}
}

type faultCase struct {
	name       string
	fault      mockserver.Fault
	kind       llm.ErrorKind
	retryAfter time.Duration // exact, or a lower bound when approx
	approx     bool
	message    string // must appear in Error.Message
	hint       bool   // Error.Hint must be set
}

func faultCases(h Harness) []faultCase {
	cases := []faultCase{
		{name: "429 retry-after seconds", fault: mockserver.Fault{Status: 429, RetryAfter: "2", Message: "slow down please 1"}, kind: llm.KindRateLimit, retryAfter: 2 * time.Second, message: "slow down please 1"},
		{name: "429 retry-after date", fault: mockserver.Fault{Status: 429, RetryAfter: time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)}, kind: llm.KindRateLimit, retryAfter: 25 * time.Second, approx: true},
		{name: "429 retry-after-ms", fault: mockserver.Fault{Status: 429, RetryAfterMS: "1500"}, kind: llm.KindRateLimit, retryAfter: 1500 * time.Millisecond},
		{name: "529 overloaded", fault: mockserver.Fault{Status: 529}, kind: llm.KindOverloaded},
		{name: "503 unavailable", fault: mockserver.Fault{Status: 503}, kind: llm.KindOverloaded},
		{name: "500 server", fault: mockserver.Fault{Status: 500, Message: "internal oops 77"}, kind: llm.KindServer, message: "internal oops 77"},
		{name: "401 auth", fault: mockserver.Fault{Status: 401, Message: "invalid x-api-key"}, kind: llm.KindAuth, message: "invalid x-api-key", hint: true},
		{name: "403 permission", fault: mockserver.Fault{Status: 403}, kind: llm.KindPermission},
		{name: "400 bad request", fault: mockserver.Fault{Status: 400, Message: "messages: field required 42"}, kind: llm.KindBadRequest, message: "field required 42"},
		{name: "404 model", fault: mockserver.Fault{Status: 404, Message: "model not found: nope"}, kind: llm.KindNotFound, message: "model not found"},
		{name: "context overflow", fault: mockserver.Fault{ContextOverflow: true}, kind: llm.KindContextOverflow},
		{name: "reset before first byte", fault: mockserver.Fault{ResetBeforeFirstByte: true}, kind: llm.KindNetwork},
		{name: "reset mid-stream", fault: mockserver.Fault{ResetAfterEvents: 3}},
		{name: "cut before final event", fault: mockserver.Fault{CutBeforeFinal: true}, kind: llm.KindStreamCut},
		{name: "malformed SSE", fault: mockserver.Fault{Malformed: true}, kind: llm.KindMalformed},
	}
	if h.Vendor == mockserver.Gemini {
		cases = append(cases, faultCase{name: "429 RetryInfo", fault: mockserver.Fault{Status: 429, RetryDelay: "7s"}, kind: llm.KindRateLimit, retryAfter: 7 * time.Second})
	}
	return cases
}

func testFaults(t *testing.T, h Harness) {
	for _, c := range faultCases(h) {
		t.Run(c.name, func(t *testing.T) {
			s := start(t, 2)
			f := c.fault
			s.Enqueue(mockserver.Turn{Text: "this reply is long enough to be cut in the middle", Fault: &f})
			_, resp, err := collect(t, h.New(s.URL, testKey), h.request(llm.UserText("hi")))
			if err == nil {
				t.Fatalf("no error; got %+v", resp)
			}
			e, ok := llm.AsError(err)
			if !ok {
				t.Fatalf("error %T %v is not an *llm.Error", err, err)
			}
			if n := len(s.Requests()); n != 1 {
				t.Errorf("%d requests made; the adapter must not retry on its own", n)
			}
			if c.kind == 0 { // mid-stream reset: cut or network, both retryable
				if !e.Retryable() {
					t.Errorf("kind %v is not retryable", e.Kind)
				}
				return
			}
			if e.Kind != c.kind {
				t.Errorf("kind = %v, want %v (%v)", e.Kind, c.kind, e)
			}
			if e.Provider == "" {
				t.Errorf("error names no provider: %v", e)
			}
			switch {
			case c.approx && (e.RetryAfter < c.retryAfter || e.RetryAfter > c.retryAfter+10*time.Second):
				t.Errorf("retry after = %v, want about %v", e.RetryAfter, c.retryAfter)
			case !c.approx && c.retryAfter != 0 && e.RetryAfter != c.retryAfter:
				t.Errorf("retry after = %v, want %v", e.RetryAfter, c.retryAfter)
			}
			if c.message != "" && !strings.Contains(e.Message, c.message) {
				t.Errorf("vendor message lost: %q does not contain %q", e.Message, c.message)
			}
			if c.hint && e.Hint == "" {
				t.Errorf("no hint saying what to do: %v", e)
			}
		})
	}
}

// testFraming checks SPEC PROV-2 against what servers and proxies put
// around a vendor's events: a UTF-8 byte-order mark before the first one,
// keep-alive events with empty data between them. The reply must be the one
// the clean stream gives: nothing lost (the first event carries the reply's
// id, usage, or the first tool call), nothing failed or retried.
func testFraming(t *testing.T, h Harness) {
	turn := mockserver.Turn{Text: "Reading it.", ToolCalls: []mockserver.ToolCall{
		{ID: "call_1", Name: "read_file", Input: `{"path":"a.go"}`}},
		Usage: llm.Usage{InputTokens: 40, OutputTokens: 12}}
	req := h.request(llm.UserText("read a.go"))
	req.Tools = []llm.ToolSpec{{Name: "read_file", Description: "Read a file.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	run := func(t *testing.T, f *mockserver.Fault) ([]llm.Delta, *llm.Response) {
		s := start(t, 2)
		tr := turn
		tr.Fault = f
		s.Enqueue(tr)
		ds, resp := mustComplete(t, h.New(s.URL, testKey), req)
		if n := len(s.Requests()); n != 1 {
			t.Errorf("%d requests made, want 1", n)
		}
		return ds, resp
	}
	wantDs, want := run(t, nil)
	for _, c := range []struct {
		name  string
		fault mockserver.Fault
	}{
		{"byte-order mark", mockserver.Fault{BOM: true}},
		{"keep-alive events", mockserver.Fault{KeepAlive: true}},
		{"both", mockserver.Fault{BOM: true, KeepAlive: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds, got := run(t, &c.fault)
			// The mock numbers its replies and may number calls: ids must be
			// there, not equal.
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(llm.ToolUse{}, "ID"), cmpopts.IgnoreFields(llm.Response{}, "ID")); diff != "" {
				t.Errorf("reply differs from the clean stream's (-clean +got):\n%s", diff)
			}
			if (got.ID == "") != (want.ID == "") {
				t.Errorf("reply id %q; the clean stream's was %q", got.ID, want.ID)
			}
			if got.Usage.Estimated {
				t.Errorf("usage %+v estimated: the vendor's counts were lost", got.Usage)
			}
			if a, b := deltaSummary(wantDs), deltaSummary(ds); a != b {
				t.Errorf("deltas %s, want %s as from the clean stream", b, a)
			}
		})
	}
}

// deltaSummary is what a stream's deltas show a user: the text, thinking
// and tool calls (names and input) in order, ids left out.
func deltaSummary(ds []llm.Delta) string {
	var b strings.Builder
	for _, d := range ds {
		switch d.Kind {
		case llm.DeltaText, llm.DeltaThinking, llm.DeltaToolInput:
			b.WriteString(d.Text)
		case llm.DeltaToolStart:
			b.WriteString("<" + d.ToolName + ">")
		}
	}
	return b.String()
}

func testRetrying(t *testing.T, h Harness) {
	s := start(t, 4)
	s.Enqueue(
		mockserver.Turn{Fault: &mockserver.Fault{Status: 529}},
		mockserver.Turn{Text: "recovered after a cut", Fault: &mockserver.Fault{CutBeforeFinal: true}},
		mockserver.Turn{Text: "recovered after a cut"},
	)
	p := llm.Retrying(h.New(s.URL, testKey), llm.RetryPolicy{Initial: time.Millisecond, Max: 5 * time.Millisecond})
	ds, resp := mustComplete(t, p, h.request(llm.UserText("hi")))
	retries := 0
	var text strings.Builder
	for _, d := range ds {
		switch d.Kind {
		case llm.DeltaRetry:
			retries++
		case llm.DeltaText:
			text.WriteString(d.Text)
		}
	}
	if retries != 2 {
		t.Errorf("%d retry deltas, want 2", retries)
	}
	if text.String() != "recovered after a cut" {
		t.Errorf("text shown = %q; want it once", text.String())
	}
	if resp.Message.TextOf() != "recovered after a cut" {
		t.Errorf("final text = %q", resp.Message.TextOf())
	}
}

func testValidateAuth(t *testing.T, h Harness) {
	s := start(t, 0)
	good, ok := h.New(s.URL, testKey).(llm.AuthValidator)
	if !ok {
		t.Fatal("adapter does not implement llm.AuthValidator")
	}
	ctx := t.Context()
	if err := good.ValidateAuth(ctx); err != nil {
		t.Errorf("valid key rejected: %v", err)
	}
	bad := h.New(s.URL, "wrong-key").(llm.AuthValidator)
	err := bad.ValidateAuth(ctx)
	if llm.KindOf(err) != llm.KindAuth {
		t.Errorf("wrong key: error %v (kind %v), want auth", err, llm.KindOf(err))
	}
}

func testMissingKey(t *testing.T, h Harness) {
	s := start(t, 0)
	_, _, err := collect(t, h.New(s.URL, ""), h.request(llm.UserText("hi")))
	e, ok := llm.AsError(err)
	if !ok || e.Kind != llm.KindAuth || e.Hint == "" {
		t.Fatalf("missing key: error %v; want an auth error with a hint", err)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests sent without a key; want none", n)
	}
}

func hasKind(ds []llm.Delta, k llm.DeltaKind) bool {
	for _, d := range ds {
		if d.Kind == k {
			return true
		}
	}
	return false
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return cmp.Equal(x, y)
}
