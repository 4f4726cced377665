package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/reinhq/rein/llm"
)

// The request body of generateContent, as far as rein fills it. Fields are
// declared in alphabetical order, and maps are encoded with sorted keys, so
// the same Request always gives the same bytes, and appending a message
// appends one content (SPEC PROV-6).

// wireRequest is a GenerateContentRequest.
type wireRequest struct {
	Contents          []wireContent   `json:"contents"`
	GenerationConfig  *wireGenConfig  `json:"generationConfig,omitempty"`
	SystemInstruction *wireContent    `json:"systemInstruction,omitempty"`
	Tools             []wireToolGroup `json:"tools,omitempty"`
}

// wireContent is one turn: a role and its parts.
type wireContent struct {
	Parts []wireOutPart `json:"parts"`
	Role  string        `json:"role,omitempty"`
}

// wireOutPart is one part of a content rein sends. Exactly one of the data
// fields is set; ThoughtSignature may go with any of them.
type wireOutPart struct {
	FileData         *wireFileData         `json:"fileData,omitempty"`
	FunctionCall     *wireFunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *wireFunctionResponse `json:"functionResponse,omitempty"`
	InlineData       *wireBlob             `json:"inlineData,omitempty"`
	Text             string                `json:"text,omitempty"`
	Thought          bool                  `json:"thought,omitempty"`
	ThoughtSignature []byte                `json:"thoughtSignature,omitempty"` // base64 on the wire
}

// wireFileData points at a file by URI.
type wireFileData struct {
	FileURI  string `json:"fileUri,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
}

// wireBlob is inline bytes, base64 on the wire.
type wireBlob struct {
	Data     []byte `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
}

// wireFunctionCall is a call the model made, sent back in the history.
type wireFunctionCall struct {
	Args json.RawMessage `json:"args,omitempty"`
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
}

// wireFunctionResponse answers a call.
type wireFunctionResponse struct {
	ID       string            `json:"id,omitempty"`
	Name     string            `json:"name"`
	Response map[string]string `json:"response"`
}

// wireGenConfig is the generationConfig.
type wireGenConfig struct {
	MaxOutputTokens int32               `json:"maxOutputTokens,omitempty"`
	StopSequences   []string            `json:"stopSequences,omitempty"`
	Temperature     *float32            `json:"temperature,omitempty"`
	ThinkingConfig  *wireThinkingConfig `json:"thinkingConfig,omitempty"`
}

// wireThinkingConfig asks for thoughts.
type wireThinkingConfig struct {
	IncludeThoughts bool   `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int32 `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
}

// wireToolGroup is one entry of tools: rein sends all its tools as function
// declarations of a single entry.
type wireToolGroup struct {
	FunctionDeclarations []wireFunctionDecl `json:"functionDeclarations"`
}

// wireFunctionDecl declares one tool; its JSON Schema goes as it is.
type wireFunctionDecl struct {
	Description          string          `json:"description,omitempty"`
	Name                 string          `json:"name"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

// Gemini's roles.
const (
	roleUser  = "user"
	roleModel = "model"
)

// buildRequest turns req into the request body.
func (p *Provider) buildRequest(req *llm.Request) (*wireRequest, error) {
	msgs := llm.PrepareHistory(req.Messages, p.name, req.Model, llm.DowngradeDrop)
	msgs = llm.MoveToolResultImages(msgs)
	body := &wireRequest{Contents: make([]wireContent, 0, len(msgs))}
	names := map[string]string{} // tool call id → tool name, for function responses
	for i, m := range msgs {
		c, err := toContent(m, names)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		if len(c.Parts) > 0 {
			body.Contents = append(body.Contents, c)
		}
	}
	gc := wireGenConfig{
		MaxOutputTokens: int32(req.MaxTokens),
		StopSequences:   req.StopSequences,
		ThinkingConfig:  thinkingConfig(req.Thinking),
	}
	if req.Temperature != nil {
		t := float32(*req.Temperature)
		gc.Temperature = &t
	}
	if gc.MaxOutputTokens != 0 || len(gc.StopSequences) > 0 || gc.Temperature != nil || gc.ThinkingConfig != nil {
		body.GenerationConfig = &gc
	}
	if req.System != "" {
		body.SystemInstruction = &wireContent{Role: roleUser, Parts: []wireOutPart{{Text: req.System}}}
	}
	if len(req.Tools) > 0 {
		decls := make([]wireFunctionDecl, len(req.Tools))
		for i, t := range req.Tools {
			d := wireFunctionDecl{Name: t.Name, Description: t.Description}
			if len(t.InputSchema) > 0 {
				if !json.Valid(t.InputSchema) {
					return nil, fmt.Errorf("tool %s: input schema is not valid JSON", t.Name)
				}
				d.ParametersJSONSchema = t.InputSchema
			}
			decls[i] = d
		}
		body.Tools = []wireToolGroup{{FunctionDeclarations: decls}}
	}
	return body, nil
}

// thinkingConfig asks for thoughts with the budget, or with the level for an
// effort and no budget (Gemini 3).
func thinkingConfig(t *llm.ThinkingConfig) *wireThinkingConfig {
	if t == nil {
		return nil
	}
	tc := &wireThinkingConfig{IncludeThoughts: true}
	switch {
	case t.BudgetTokens != 0:
		b := int32(t.BudgetTokens)
		tc.ThinkingBudget = &b
	case t.Effort != "":
		tc.ThinkingLevel = strings.ToUpper(t.Effort)
	}
	return tc
}

// toContent converts one message; names collects the tool calls seen so far,
// so a function response can name its tool.
func toContent(m llm.Message, names map[string]string) (wireContent, error) {
	c := wireContent{Role: roleUser, Parts: make([]wireOutPart, 0, len(m.Content))}
	if m.Role == llm.RoleAssistant {
		c.Role = roleModel
	}
	// pending is the signature of a text-less Thinking block: it belongs on
	// the part that follows.
	var pending []byte
	add := func(p wireOutPart) {
		if pending != nil && p.ThoughtSignature == nil {
			p.ThoughtSignature, pending = pending, nil
		}
		c.Parts = append(c.Parts, p)
	}
	for _, b := range m.Content {
		switch b := b.(type) {
		case *llm.Text:
			if b.Text != "" {
				add(wireOutPart{Text: b.Text})
			}
		case *llm.Image:
			add(imagePart(b))
		case *llm.Thinking:
			switch {
			case b.Redacted: // another vendor's: PrepareHistory drops these
			case b.Text == "":
				pending = signature(b.Signature)
			default:
				add(wireOutPart{Text: b.Text, Thought: true, ThoughtSignature: signature(b.Signature)})
			}
		case *llm.ToolUse:
			args, err := callArgs(b.Input)
			if err != nil {
				return c, fmt.Errorf("tool call %s: input: %w", b.ID, err)
			}
			names[b.ID] = b.Name
			add(wireOutPart{
				FunctionCall:     &wireFunctionCall{ID: b.ID, Name: b.Name, Args: args},
				ThoughtSignature: signature(b.Signature),
			})
		case *llm.ToolResult:
			add(wireOutPart{FunctionResponse: functionResponse(b, names[b.ToolUseID])})
		case *llm.Opaque:
			// This adapter makes none; one in the history (another API's,
			// under this provider's name) has no place here: left out, counted.
			llm.RecordDrop(m.Provider, llm.DropReplay, b.Type)
		default:
			return c, fmt.Errorf("unsupported block %T", b)
		}
	}
	if n := len(c.Parts); pending != nil && n > 0 && c.Parts[n-1].ThoughtSignature == nil {
		c.Parts[n-1].ThoughtSignature = pending // the signed part was the last
	}
	return c, nil
}

// callArgs turns a call's input into functionCall.args: a JSON object,
// written with sorted keys and its numbers exactly as they were; nil for no
// arguments, which the API takes as {}.
func callArgs(input json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(input)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	if len(args) == 0 {
		return nil, nil
	}
	return json.Marshal(args)
}

func imagePart(img *llm.Image) wireOutPart {
	if len(img.Data) == 0 && img.URL != "" {
		return wireOutPart{FileData: &wireFileData{FileURI: img.URL, MIMEType: img.MediaType}}
	}
	mediaType := img.MediaType
	if mediaType == "" {
		mediaType = http.DetectContentType(img.Data) // the API needs the data's type, as the other adapters send it
	}
	return wireOutPart{InlineData: &wireBlob{MIMEType: mediaType, Data: img.Data}}
}

// functionResponse answers a call: {"output": text}, or {"error": text} when
// the result is an error. Images were moved out before.
func functionResponse(r *llm.ToolResult, name string) *wireFunctionResponse {
	var texts []string
	for _, b := range r.Content {
		if t, ok := b.(*llm.Text); ok {
			texts = append(texts, t.Text)
		}
	}
	key := "output"
	if r.IsError {
		key = "error"
	}
	if name == "" {
		name = "unknown_tool" // a result whose call is not in the history
	}
	return &wireFunctionResponse{ID: r.ToolUseID, Name: name, Response: map[string]string{key: strings.Join(texts, "\n")}}
}

// signature turns a stored signature back into the bytes Gemini sent. The
// adapter stores them as standard base64, which decodes and re-encodes to the
// same text; anything else is sent as it is.
func signature(s string) []byte {
	if s == "" {
		return nil
	}
	if b, err := base64.StdEncoding.Strict().DecodeString(s); err == nil {
		return b
	}
	return []byte(s)
}

// encodeSignature is signature's inverse: the text rein keeps.
func encodeSignature(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return base64.StdEncoding.EncodeToString(b)
}
