package sdkcheck_test

import (
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/llm"
)

// testKey is the API key both sides send to the capture server.
const testKey = "sk-sdkcheck"

// requestRow is one representative request, sent through rein's adapter and
// through the vendor's SDK.
type requestRow struct {
	name string
	req  *llm.Request
}

// Tool specs whose schemas use what agents' tools use: nesting, arrays,
// enums, required lists, additionalProperties, descriptions, a schema with
// its keys out of order, and an empty one.
var (
	readTool = llm.ToolSpec{Name: "read_file", Description: "Read a file.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Relative path."},"lines":{"type":"array","items":{"type":"integer","minimum":1},"maxItems":2}},"required":["path"],"additionalProperties":false}`)}
	editTool = llm.ToolSpec{Name: "edit", Description: "Edit a file <in place> & save.",
		InputSchema: json.RawMessage(`{"required":["path","edits"],"properties":{"edits":{"type":"array","items":{"type":"object","properties":{"old":{"type":"string"},"new":{"type":"string"},"mode":{"enum":["replace","insert"],"type":"string"}},"required":["old","new"]}},"path":{"type":"string"}},"type":"object"}`)}
	noArgsTool = llm.ToolSpec{Name: "now", Description: "The time."}
)

// requestTable is the table of representative requests for provider/model:
// histories are stamped as that model's own, so signed thinking is
// replayed, not dropped (SPEC PROV-5).
func requestTable(model, provider string) []requestRow {
	asst := func(blocks ...llm.Block) llm.Message {
		return llm.Message{Role: llm.RoleAssistant, Provider: provider, Model: model, Content: blocks}
	}
	user := func(blocks ...llm.Block) llm.Message { return llm.Message{Role: llm.RoleUser, Content: blocks} }
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	jpeg := []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00") // no media type given: it is sniffed
	temp := 0.25
	rows := []requestRow{
		{"system prompt and one turn", &llm.Request{Model: model, System: "You are rein. Be brief.", MaxTokens: 1000,
			Messages: []llm.Message{llm.UserText("Hello <there> & \u2028 good day")}}},
		{"multi-turn with tool calls and results", &llm.Request{Model: model, System: "Use tools.",
			Tools: []llm.ToolSpec{readTool, editTool, noArgsTool},
			Messages: []llm.Message{
				llm.UserText("Fix a.go."),
				asst(&llm.Text{Text: "Reading it."},
					&llm.ToolUse{ID: "call_01", Name: "read_file", Input: json.RawMessage(`{"path":"a.go","lines":[1,20]}`)},
					&llm.ToolUse{ID: "call_02", Name: "now", Input: json.RawMessage(`{}`)}),
				user(&llm.ToolResult{ToolUseID: "call_01", Content: []llm.Block{&llm.Text{Text: "package a"}, &llm.Text{Text: "func A() {}"}}},
					&llm.ToolResult{ToolUseID: "call_02", IsError: true, Content: []llm.Block{&llm.Text{Text: "clock unavailable"}}}),
				asst(&llm.ToolUse{ID: "call_03", Name: "edit", Input: json.RawMessage(`{"path":"a.go","edits":[{"old":"A","new":"B","mode":"replace"}]}`)}),
				user(&llm.ToolResult{ToolUseID: "call_03", Content: []llm.Block{&llm.Text{Text: "ok"}}}, &llm.Text{Text: "Thanks. Now explain."}),
			}}},
		{"images in a turn and in a tool result", &llm.Request{Model: model, Tools: []llm.ToolSpec{readTool},
			Messages: []llm.Message{
				user(&llm.Text{Text: "What is in these?"}, &llm.Image{MediaType: "image/png", Data: png},
					&llm.Image{URL: "https://example.com/cat.jpg", MediaType: "image/jpeg"}, &llm.Image{Data: jpeg}),
				asst(&llm.ToolUse{ID: "call_11", Name: "read_file", Input: json.RawMessage(`{"path":"b.png"}`)}),
				user(&llm.ToolResult{ToolUseID: "call_11", Content: []llm.Block{&llm.Text{Text: "an image"}, &llm.Image{MediaType: "image/png", Data: png}}}),
			}}},
		{"thinking budget and signed thinking in the history", &llm.Request{Model: model, MaxTokens: 2048,
			Thinking: &llm.ThinkingConfig{BudgetTokens: 3000},
			Tools:    []llm.ToolSpec{readTool},
			Messages: []llm.Message{
				llm.UserText("Think, then read a.go."),
				asst(&llm.Thinking{ID: "rs_01", Text: "I should read it.", Signature: "RXFRQkNrWUlCeGdD"},
					&llm.Thinking{Redacted: true, Signature: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
					&llm.Text{Text: "Reading."},
					&llm.ToolUse{ID: "call_21", Name: "read_file", Input: json.RawMessage(`{"path":"a.go"}`), Signature: "c2lnLTI="}),
				user(&llm.ToolResult{ToolUseID: "call_21", Content: []llm.Block{&llm.Text{Text: "package a"}}}),
			}}},
		{"effort, stop sequences, temperature and cache key", &llm.Request{Model: model, MaxTokens: 512,
			Thinking: &llm.ThinkingConfig{Effort: "high"}, StopSequences: []string{"</done>", "\n\nUser:"},
			Temperature: &temp, CacheKey: "session-7f3a/agent-main",
			Messages: []llm.Message{llm.UserText("Count to three, then say </done>.")}}},
		{"empty text and empty tool input", &llm.Request{Model: model, Tools: []llm.ToolSpec{noArgsTool},
			Messages: []llm.Message{
				user(&llm.Text{Text: "What time is it?"}),
				asst(&llm.ToolUse{ID: "call_31", Name: "now"}),
				user(&llm.ToolResult{ToolUseID: "call_31", Content: []llm.Block{&llm.Text{Text: "12:00"}}}),
			}}},
	}
	// A turn with blocks rein does not model, kept whole (llm.Opaque) and
	// replayed to their provider: a server tool's call and result. Chat
	// Completions and Gemini have no place for them and leave them out.
	var opaque []llm.Block
	for _, raw := range opaqueBlocks[provider] {
		norm, typ, err := llm.NormalizeOpaque([]byte(raw))
		if err != nil {
			panic(fmt.Sprintf("opaque block %s: %v", raw, err)) // a table that does not build is a bug of the table
		}
		opaque = append(opaque, &llm.Opaque{Provider: provider, Type: typ, Raw: norm})
	}
	rows = append(rows, requestRow{"server tool blocks replayed", &llm.Request{Model: model, Messages: []llm.Message{
		llm.UserText("What is the weather in New York?"),
		asst(append(opaque, &llm.Text{Text: "It is sunny."})...),
		llm.UserText("And tomorrow?"),
		asst(&llm.Text{Text: "Let me look."}),
		llm.UserText("Go on."),
	}}})
	return rows
}

// opaqueBlocks are, per provider, vendor blocks of a server-side web search
// as the APIs send them.
var opaqueBlocks = map[string][]string{
	"anthropic": {
		`{"type":"server_tool_use","id":"srvtoolu_014hJH82Qum7Td6UV8gDXThB","name":"web_search","input":{"query":"weather NYC today"}}`,
		`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_014hJH82Qum7Td6UV8gDXThB","content":[{"type":"web_search_result","title":"Weather <NYC> & more","url":"https://weather.example/nyc","encrypted_content":"Ev0DCioIAxgCIiQ3","page_age":"January 6, 2025"}]}`,
	},
	"openai": {
		`{"id":"ws_68d","type":"web_search_call","status":"completed","action":{"type":"search","query":"weather NYC today"}}`,
	},
	"deepseek": {`{"type":"web_search_call","id":"ws_1","status":"completed"}`},
	"google":   {`{"type":"executableCode","code":"print(1)"}`},
}
