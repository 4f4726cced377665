package cli

import (
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// The shapes of Claude Code's headless output as its reference documents
// them (SDKResultMessage, SDKSystemMessage init, SDKAssistantMessage,
// SDKUserMessage, SDKPartialAssistantMessage): a line must decode into
// its struct with no field the struct lacks, and carry every required
// field with its JSON type.

type wantUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
}

type wantResult struct {
	Type          string     `json:"type"`
	Subtype       string     `json:"subtype"`
	UUID          string     `json:"uuid"`
	SessionID     string     `json:"session_id"`
	DurationMS    *int64     `json:"duration_ms"`
	DurationAPIMS *int64     `json:"duration_api_ms"`
	IsError       *bool      `json:"is_error"`
	NumTurns      *int       `json:"num_turns"`
	Result        *string    `json:"result"`
	StopReason    *string    `json:"stop_reason"`
	TotalCostUSD  *float64   `json:"total_cost_usd"`
	Usage         *wantUsage `json:"usage"`
	ModelUsage    map[string]struct {
		InputTokens              int64   `json:"inputTokens"`
		OutputTokens             int64   `json:"outputTokens"`
		CacheReadInputTokens     int64   `json:"cacheReadInputTokens"`
		CacheCreationInputTokens int64   `json:"cacheCreationInputTokens"`
		WebSearchRequests        int     `json:"webSearchRequests"`
		CostUSD                  float64 `json:"costUSD"`
		ContextWindow            int     `json:"contextWindow"`
		MaxOutputTokens          int     `json:"maxOutputTokens"`
	} `json:"modelUsage"`
	PermissionDenials []struct {
		ToolName  string          `json:"tool_name"`
		ToolUseID string          `json:"tool_use_id"`
		ToolInput json.RawMessage `json:"tool_input"`
	} `json:"permission_denials"`
	Errors []string `json:"errors"`
}

type wantInit struct {
	Type         string   `json:"type"`
	Subtype      string   `json:"subtype"`
	UUID         string   `json:"uuid"`
	SessionID    string   `json:"session_id"`
	APIKeySource string   `json:"apiKeySource"`
	Cwd          string   `json:"cwd"`
	Tools        []string `json:"tools"`
	MCPServers   []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"mcp_servers"`
	Model          string   `json:"model"`
	PermissionMode string   `json:"permissionMode"`
	SlashCommands  []string `json:"slash_commands"`
	OutputStyle    string   `json:"output_style"`
	Agents         []string `json:"agents"`
	Skills         []string `json:"skills"`
	Plugins        []struct {
		Name string `json:"name"`
		Path string `json:"path"`
	} `json:"plugins"`
}

type wantBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	Thinking  *string         `json:"thinking"`
	Signature *string         `json:"signature"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   *bool           `json:"is_error"`
}

type wantAssistant struct {
	Type      string `json:"type"`
	UUID      string `json:"uuid"`
	SessionID string `json:"session_id"`
	Message   struct {
		ID           string      `json:"id"`
		Type         string      `json:"type"`
		Role         string      `json:"role"`
		Model        string      `json:"model"`
		Content      []wantBlock `json:"content"`
		StopReason   *string     `json:"stop_reason"`
		StopSequence *string     `json:"stop_sequence"`
		Usage        wantUsage   `json:"usage"`
	} `json:"message"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
}

type wantUser struct {
	Type      string `json:"type"`
	UUID      string `json:"uuid"`
	SessionID string `json:"session_id"`
	Message   struct {
		Role    string      `json:"role"`
		Content []wantBlock `json:"content"`
	} `json:"message"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
}

type wantStreamEvent struct {
	Type            string          `json:"type"`
	UUID            string          `json:"uuid"`
	SessionID       string          `json:"session_id"`
	Event           json.RawMessage `json:"event"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
}

// strictDecode decodes line into v, refusing a field v does not declare.
func strictDecode(t *testing.T, line string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%T: %v\nline: %s", v, err, line)
	}
}

// requireKeys fails unless line's object has every key, not null unless
// nullable names it.
func requireKeys(t *testing.T, line string, keys []string, nullable ...string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		v, ok := m[k]
		if !ok {
			t.Errorf("%s lacks %q: %s", m["type"], k, line)
		} else if string(v) == "null" && !slices.Contains(nullable, k) {
			t.Errorf("%s: %q is null", m["type"], k)
		}
	}
}

var resultKeys = []string{"type", "subtype", "uuid", "session_id", "duration_ms", "duration_api_ms", "is_error",
	"num_turns", "stop_reason", "total_cost_usd", "usage", "modelUsage", "permission_denials"}

var uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// checkCCLines checks every line of Claude Code stream-json output
// against its documented shape and the order system/init … result, and
// returns the lines by type.
func checkCCLines(t *testing.T, out string) map[string][]string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	byType := map[string][]string{}
	session := ""
	for i, l := range lines {
		var head struct {
			Type, Subtype, UUID string
			SessionID           string `json:"session_id"`
		}
		if err := json.Unmarshal([]byte(l), &head); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, l)
		}
		if !uuidRe.MatchString(head.UUID) {
			t.Errorf("line %d: uuid %q is not a v4 UUID", i+1, head.UUID)
		}
		if session == "" {
			session = head.SessionID
		}
		if head.SessionID == "" || head.SessionID != session {
			t.Errorf("line %d: session_id %q, want %q on every line", i+1, head.SessionID, session)
		}
		byType[head.Type] = append(byType[head.Type], l)
		switch head.Type {
		case "system":
			if head.Subtype != "init" {
				continue
			}
			if i != 0 {
				t.Errorf("system/init is line %d, want the first", i+1)
			}
			var v wantInit
			strictDecode(t, l, &v)
			requireKeys(t, l, []string{"type", "subtype", "uuid", "session_id", "apiKeySource", "cwd", "tools", "mcp_servers",
				"model", "permissionMode", "slash_commands", "output_style"})
		case "assistant":
			var v wantAssistant
			strictDecode(t, l, &v)
			requireKeys(t, l, []string{"type", "uuid", "session_id", "message", "parent_tool_use_id"}, "parent_tool_use_id")
			if !strings.HasPrefix(v.Message.ID, "msg_") || v.Message.Type != "message" || v.Message.Role != "assistant" || v.Message.Usage.OutputTokens == nil {
				t.Errorf("assistant message: %s", l)
			}
		case "user":
			var v wantUser
			strictDecode(t, l, &v)
			requireKeys(t, l, []string{"type", "uuid", "session_id", "message", "parent_tool_use_id"}, "parent_tool_use_id")
			for _, b := range v.Message.Content {
				if b.Type != "tool_result" || b.ToolUseID == "" || len(b.Content) == 0 {
					t.Errorf("user line block: %+v", b)
				}
			}
		case "stream_event":
			var v wantStreamEvent
			strictDecode(t, l, &v)
			requireKeys(t, l, []string{"type", "uuid", "session_id", "event", "parent_tool_use_id"}, "parent_tool_use_id")
		case "result":
			if i != len(lines)-1 {
				t.Errorf("result is line %d of %d, want the last", i+1, len(lines))
			}
			checkResult(t, l)
		default:
			t.Errorf("line %d: unknown type %q", i+1, head.Type)
		}
	}
	return byType
}

// checkResult checks one result object against SDKResultMessage.
func checkResult(t *testing.T, l string) wantResult {
	t.Helper()
	var v wantResult
	strictDecode(t, l, &v)
	requireKeys(t, l, resultKeys, "stop_reason")
	if v.Subtype == "success" {
		requireKeys(t, l, []string{"result"})
		if v.Errors != nil {
			t.Errorf("a success result has errors: %s", l)
		}
	} else if v.Result != nil || len(v.Errors) == 0 || !*v.IsError {
		t.Errorf("an error result (%s) must have errors and is_error, no result: %s", v.Subtype, l)
	}
	return v
}

var (
	ccUUIDRe  = regexp.MustCompile(`"uuid":"[0-9a-f-]{36}"`)
	ccMsgIDRe = regexp.MustCompile(`"msg_[0-9a-f]{24}"`)
)

// ccNormalise replaces what changes from run to run in Claude Code
// output, numbering the message ids in order of appearance.
func (te *testEnv) ccNormalise(s string) string {
	s = ccUUIDRe.ReplaceAllString(te.normalise(s), `"uuid":"$$UUID"`)
	ids := map[string]string{}
	return ccMsgIDRe.ReplaceAllStringFunc(s, func(id string) string {
		if ids[id] == "" {
			ids[id] = `"msg_` + string(rune('A'+len(ids))) + `"`
		}
		return ids[id]
	})
}

// COMPAT-1, CLI-1: --output-format json and stream-json (with and without
// partial messages) against a scripted model that calls a real tool: the
// exact lines (golden) and each line's documented shape.
func TestCCOutputGolden_COMPAT1(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"json", []string{"--output-format", "json"}},
		{"stream", []string{"--output-format", "stream-json", "--verbose"}},
		{"partial", []string{"--output-format", "stream-json", "--verbose", "--include-partial-messages"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			te := newTestEnv(t)
			te.write("a.txt", "a\n")
			te.write("b.txt", "b\n")
			te.script("m", listThenAnswer()...)
			args := append([]string{"run", "-p", "--model", "scripted/m"}, tt.args...)
			out, errs := te.mustRun(ExitOK, append(args, "what is here?")...)
			if errs != "" {
				t.Errorf("stderr: %s", errs)
			}
			golden(t, "cc_"+tt.name+".golden", te.ccNormalise(out))
			if tt.name == "json" {
				if strings.Count(out, "\n") != 1 {
					t.Fatalf("json: want one object on one line:\n%s", out)
				}
				r := checkResult(t, strings.TrimSpace(out))
				if *r.Result != "The workspace holds a.txt and b.txt." || *r.NumTurns != 2 || *r.TotalCostUSD != 0.00678 ||
					*r.Usage.InputTokens != 2100 || *r.Usage.OutputTokens != 32 || r.ModelUsage["m"].CostUSD != 0.00678 {
					t.Errorf("result values: %s", out)
				}
				return
			}
			by := checkCCLines(t, out)
			if len(by["system"]) != 1 || len(by["assistant"]) != 2 || len(by["user"]) != 1 || len(by["result"]) != 1 {
				t.Errorf("lines by type: system %d, assistant %d, user %d, result %d",
					len(by["system"]), len(by["assistant"]), len(by["user"]), len(by["result"]))
			}
			if (len(by["stream_event"]) > 0) != (tt.name == "partial") {
				t.Errorf("%d stream_event lines with %v", len(by["stream_event"]), tt.args)
			}
			var a wantAssistant
			strictDecode(t, by["assistant"][0], &a)
			if c := a.Message.Content; len(c) != 2 || c[1].Type != "tool_use" || c[1].ID != "call_1" || c[1].Name != "list_dir" ||
				*a.Message.StopReason != "tool_use" || *a.Message.Usage.InputTokens != 1000 {
				t.Errorf("first assistant line: %s", by["assistant"][0])
			}
			var u wantUser
			strictDecode(t, by["user"][0], &u)
			if b := u.Message.Content[0]; b.ToolUseID != "call_1" || string(b.Content) != `"a.txt\nb.txt\n"` || *b.IsError {
				t.Errorf("user line: %s", by["user"][0])
			}
			if tt.name == "partial" {
				text := ""
				for _, l := range by["stream_event"] { // jq -rj 'select(.type=="stream_event" and .event.delta.type?=="text_delta") | .event.delta.text'
					var e struct {
						Event struct {
							Delta struct{ Type, Text string }
						}
					}
					_ = json.Unmarshal([]byte(l), &e)
					if e.Event.Delta.Type == "text_delta" {
						text += e.Event.Delta.Text
					}
				}
				if text != "Let me look.The workspace holds a.txt and b.txt." {
					t.Errorf("text of the text_delta events: %q", text)
				}
			}
		})
	}
}

// COMPAT-1: the jq script — `.result`, `.is_error`, `.subtype`,
// `.total_cost_usd`, `.num_turns`, `.session_id` — reads values, not null,
// from `rein run -p --output-format json`.
func TestCCJQFields_COMPAT1(t *testing.T) {
	te := newTestEnv(t)
	te.script("m", llmtest.Reply{Text: "4", Usage: llm.Usage{InputTokens: 10, OutputTokens: 1}})
	out, _ := te.mustRun(ExitOK, "run", "--model", "scripted/m", "-p", "--output-format", "json", "2+2?")
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"result": "4", "is_error": false, "subtype": "success", "num_turns": 1.0, "type": "result"} {
		if !reflect.DeepEqual(m[k], want) {
			t.Errorf(".%s = %#v, want %#v", k, m[k], want)
		}
	}
	if c, ok := m["total_cost_usd"].(float64); !ok || c <= 0 {
		t.Errorf(".total_cost_usd = %#v", m["total_cost_usd"])
	}
	if s, ok := m["session_id"].(string); !ok || s == "" {
		t.Errorf(".session_id = %#v", m["session_id"])
	}
}

// COMPAT-1: Claude Code's exit codes and result subtypes, by how the run
// ends.
func TestCCExitCodes_COMPAT1(t *testing.T) {
	loop := llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("", "list_dir", `{}`)}}
	tests := []struct {
		name    string
		replies []llmtest.Reply
		args    []string
		code    int
		subtype string
		errors  string
	}{
		{"success", []llmtest.Reply{{Text: "done"}}, nil, 0, "success", ""},
		{"max turns", []llmtest.Reply{loop, loop}, []string{"--max-turns", "1"}, 1, "error_max_turns", "max_turns"},
		{"max tokens", []llmtest.Reply{{Text: "cut", Stop: llm.StopMaxTokens}}, nil, 1, "error_during_execution", "max_tokens"},
		{"refusal", []llmtest.Reply{{Text: "no", Stop: llm.StopRefusal}}, nil, 1, "error_during_execution", "refusal"},
		{"provider error", []llmtest.Reply{{Err: &llm.Error{Kind: llm.KindAuth, Status: 401, Err: errTest}}}, nil, 1, "error_during_execution", "error"},
	}
	for _, tt := range tests {
		for _, format := range []string{"json", "stream-json"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				te := newTestEnv(t)
				te.script("m", tt.replies...)
				args := append([]string{"run", "--model", "scripted/m", "--output-format", format}, tt.args...)
				code, out, errs := te.run(append(args, "go")...)
				if code != tt.code {
					t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, errs)
				}
				lines := strings.Split(strings.TrimSpace(out), "\n")
				r := checkResult(t, lines[len(lines)-1])
				if r.Subtype != tt.subtype {
					t.Errorf("subtype %q, want %q", r.Subtype, tt.subtype)
				}
				if tt.errors != "" && (len(r.Errors) != 1 || !strings.HasPrefix(r.Errors[0], tt.errors)) {
					t.Errorf("errors %q, want one starting %q", r.Errors, tt.errors)
				}
				if tt.code != 0 && errs == "" {
					t.Error("a failed run says nothing on stderr")
				}
			})
		}
	}
}

// COMPAT-1: the calls a headless run denies are the result's
// permission_denials, with the call's id and input.
func TestCCPermissionDenials_COMPAT1(t *testing.T) {
	te := newTestEnv(t)
	te.script("m",
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "bash", `{"command":"echo hi"}`)}},
		llmtest.Reply{Text: "could not"})
	out, _ := te.mustRun(ExitOK, "run", "--model", "scripted/m", "--output-format", "json", "go")
	r := checkResult(t, strings.TrimSpace(out))
	if len(r.PermissionDenials) != 1 {
		t.Fatalf("permission_denials: %s", out)
	}
	d := r.PermissionDenials[0]
	var in map[string]string
	_ = json.Unmarshal(d.ToolInput, &in)
	if d.ToolName != "bash" || d.ToolUseID != "c1" || in["command"] != "echo hi" {
		t.Errorf("denial %+v", d)
	}
}

// errTest is a provider failure's cause.
var errTest = errors.New("invalid key")

// COMPAT-1: a sub-agent's tool calls and results are assistant and user
// lines whose parent_tool_use_id is the task call that started it; its
// text stays inside it, and its usage counts in modelUsage.
func TestCCSubagentLines_COMPAT1(t *testing.T) {
	te := newTestEnv(t)
	te.write("a.txt", "a\n")
	te.script("m",
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("t1", "task", `{"agent":"explore","prompt":"list the files"}`)},
			Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}},
		llmtest.Reply{Text: "sub looks", ToolCalls: []llm.ToolUse{llmtest.Call("s1", "list_dir", `{"path":"."}`)},
			Usage: llm.Usage{InputTokens: 50, OutputTokens: 5}},
		llmtest.Reply{Text: "sub report: a.txt", Usage: llm.Usage{InputTokens: 60, OutputTokens: 6}},
		llmtest.Reply{Text: "There is a.txt.", Usage: llm.Usage{InputTokens: 200, OutputTokens: 20}})
	out, _ := te.mustRun(ExitOK, "run", "--model", "scripted/m", "--output-format", "stream-json", "--verbose", "what is here?")
	by := checkCCLines(t, out)
	var subAssistant, subUser int
	for _, l := range append(by["assistant"], by["user"]...) {
		if !strings.Contains(l, `"parent_tool_use_id":"t1"`) {
			continue
		}
		if strings.Contains(l, "sub looks") || strings.Contains(l, "sub report") {
			t.Errorf("a sub-agent's text is forwarded: %s", l)
		}
		switch {
		case strings.HasPrefix(l, `{"type":"assistant"`) && strings.Contains(l, `"id":"s1"`):
			subAssistant++
		case strings.HasPrefix(l, `{"type":"user"`) && strings.Contains(l, `"tool_use_id":"s1"`):
			subUser++
		}
	}
	if subAssistant != 1 || subUser != 1 {
		t.Errorf("sub-agent lines: %d assistant, %d user, want 1 and 1:\n%s", subAssistant, subUser, out)
	}
	r := checkResult(t, by["result"][0])
	if *r.Result != "There is a.txt." || *r.Usage.InputTokens != 410 || r.ModelUsage["m"].InputTokens != 410 {
		t.Errorf("result: %s", by["result"][0])
	}
	var init wantInit
	strictDecode(t, by["system"][0], &init)
	if !slices.Contains(init.Tools, "task") {
		t.Errorf("system/init tools lack task: %v", init.Tools)
	}
}
