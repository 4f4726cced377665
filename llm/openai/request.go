package openai

import (
	"encoding/json"
	"strings"
)

// The request bodies of POST /chat/completions, /responses and /embeddings,
// as far as rein fills them. They are byte-identical to what the official
// SDK sent when it built them (golden_body_test.go pins them; SPEC PROV-6):
// fields appear in the SDK's order, which these declarations follow, a field
// the SDK left out when unset is omitted (omitzero), and "stream" comes
// last, where the SDK appended it. Encoded by encodeJSON: compact, '<', '>'
// and '&' unescaped.

// chatRequest is a Chat Completions request.
type chatRequest struct {
	Messages            []chatMessage     `json:"messages,omitzero"`
	Model               string            `json:"model,omitzero"`
	MaxCompletionTokens int64             `json:"max_completion_tokens,omitzero"`
	MaxTokens           int64             `json:"max_tokens,omitzero"`
	PromptCacheKey      string            `json:"prompt_cache_key,omitzero"`
	Temperature         *float64          `json:"temperature,omitzero"`
	ReasoningEffort     string            `json:"reasoning_effort,omitzero"`
	Stop                []string          `json:"stop,omitzero"`
	StreamOptions       chatStreamOptions `json:"stream_options"`
	Tools               []chatTool        `json:"tools,omitzero"`
	Stream              bool              `json:"stream"`
}

// chatStreamOptions asks for the usage chunk at the end of a stream.
type chatStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatMessage is one message of any role. Content is a string or a
// []chatPart; it is left out only of an assistant message that has tool
// calls and no text. ToolCallID is set on tool messages, where it is sent
// even when empty. The reasoning fields, which OpenAI does not know, go last
// and are encoded as the SDK encoded extra fields.
type chatMessage struct {
	Content          any             `json:"content,omitempty"`
	ToolCalls        []chatCallParam `json:"tool_calls,omitzero"`
	ToolCallID       *string         `json:"tool_call_id,omitempty"`
	Role             string          `json:"role"`
	ReasoningContent extraString     `json:"reasoning_content,omitzero"`
	ReasoningDetails extraRaw        `json:"reasoning_details,omitzero"`
}

// chatPart is a part of a user message's content: a chatTextPart or a
// chatImagePart.
type chatPart any

// chatTextPart is a text part of a user message.
type chatTextPart struct {
	Text string `json:"text"`
	Type string `json:"type"` // "text"
}

// chatImagePart is an image part of a user message.
type chatImagePart struct {
	ImageURL chatImageURL `json:"image_url"`
	Type     string       `json:"type"` // "image_url"
}

// chatImageURL is an image's URL, a data: URL for inline bytes.
type chatImageURL struct {
	URL string `json:"url"`
}

// chatCallParam is a tool call of an assistant message in the history.
type chatCallParam struct {
	ID       string           `json:"id"`
	Function chatCallFunction `json:"function"`
	Type     string           `json:"type"` // "function"
}

// chatCallFunction is the function a chatCallParam calls.
type chatCallFunction struct {
	Arguments string `json:"arguments"`
	Name      string `json:"name"`
}

// chatTool declares one tool.
type chatTool struct {
	Function chatFunction `json:"function"`
	Type     string       `json:"type"` // "function"
}

// chatFunction is a function definition whose parameters are the tool's
// schema as given, key order kept.
type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// respRequest is a Responses API request.
type respRequest struct {
	Instructions    string         `json:"instructions,omitzero"`
	MaxOutputTokens int64          `json:"max_output_tokens,omitzero"`
	PromptCacheKey  string         `json:"prompt_cache_key,omitzero"`
	Store           bool           `json:"store"`
	Temperature     *float64       `json:"temperature,omitzero"`
	Include         []string       `json:"include"`
	Input           []any          `json:"input,omitzero"`
	Model           string         `json:"model,omitzero"`
	Reasoning       *respReasoning `json:"reasoning,omitzero"`
	Tools           []respFunction `json:"tools,omitzero"`
	Stream          bool           `json:"stream"`
}

// respReasoning asks for reasoning of an effort, with its summary.
type respReasoning struct {
	Effort  string `json:"effort"`
	Summary string `json:"summary"` // "auto"
}

// respFunction is a function tool whose parameters are the tool's schema as
// given, key order kept. Strict is sent false: the Responses API defaults it
// to true, which most tool schemas do not satisfy.
type respFunction struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// respMessage is an input message: the user's, with input parts, or the
// assistant's, with output text.
type respMessage struct {
	Content []any  `json:"content"`
	Role    string `json:"role"`
	Type    string `json:"type"` // "message"
}

// respInputText is a text part of a user message.
type respInputText struct {
	Text string `json:"text"`
	Type string `json:"type"` // "input_text"
}

// respInputImage is an image part of a user message.
type respInputImage struct {
	Detail   string `json:"detail"` // "auto"
	ImageURL string `json:"image_url"`
	Type     string `json:"type"` // "input_image"
}

// respOutputText is the text of an assistant message.
type respOutputText struct {
	Annotations []struct{} `json:"annotations"` // always empty
	Text        string     `json:"text"`
	Type        string     `json:"type"` // "output_text"
}

// respReasoningItem is a reasoning item replayed to the model that made it.
type respReasoningItem struct {
	ID               string        `json:"id"`
	Summary          []respSummary `json:"summary"`
	EncryptedContent string        `json:"encrypted_content"`
	Type             string        `json:"type"` // "reasoning"
}

// respSummary is one part of a reasoning item's summary.
type respSummary struct {
	Text string `json:"text"`
	Type string `json:"type"` // "summary_text"
}

// respFunctionCall is a tool call of the model in the history.
type respFunctionCall struct {
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Type      string `json:"type"` // "function_call"
}

// respFunctionCallOutput is a tool result.
type respFunctionCallOutput struct {
	Output string `json:"output"`
	CallID string `json:"call_id"`
	Type   string `json:"type"` // "function_call_output"
}

// embedRequest is an embeddings request.
type embedRequest struct {
	Input          []string `json:"input"`
	Model          string   `json:"model,omitzero"`
	Dimensions     int      `json:"dimensions,omitzero"`
	EncodingFormat string   `json:"encoding_format"` // "float"
}

// extraString is a string encoded as the SDK encoded the extra fields it
// did not know (through sjson): as it is between quotes when it has only
// printable ASCII without '"' or '\', else as encoding/json.Marshal encodes
// it, '<', '>' and '&' escaped.
type extraString string

// MarshalJSON encodes s the way sjson does.
func (s extraString) MarshalJSON() ([]byte, error) {
	if strings.IndexFunc(string(s), needsEscape) < 0 {
		return []byte(`"` + string(s) + `"`), nil
	}
	return json.Marshal(string(s))
}

// needsEscape reports whether sjson would have escaped a string holding r:
// a control character, a byte beyond ASCII, a quote or a backslash.
func needsEscape(r rune) bool { return r < ' ' || r > 0x7f || r == '"' || r == '\\' }

// extraRaw is JSON sent as an extra field: encoding/json compacts it with
// '<', '>', '&', U+2028 and U+2029 escaped, as it did through sjson.
type extraRaw json.RawMessage

// MarshalJSON encodes r the way sjson does.
func (r extraRaw) MarshalJSON() ([]byte, error) { return json.Marshal(json.RawMessage(r)) }
