package cli

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/reinhq/rein/llm"
)

// Claude Code's --input-format stream-json (SPEC COMPAT-1): one JSON
// object per line on stdin, each a user turn
//
//	{"type":"user","message":{"role":"user","content":"…"}}
//	{"type":"user","message":{"role":"user","content":[{"type":"text","text":"…"},
//	  {"type":"image","source":{"type":"base64","media_type":"image/png","data":"…"}}]}}
//
// or a control request of the Agent SDK, which rein answers: initialize
// succeeds, every other subtype is an error response naming it.

// maxCCInputLine bounds one line of stream-json input, as Claude Code
// bounds its stdin (10 MB).
const maxCCInputLine = 10 << 20

// maxCCImage bounds one image of a user message, as --image does.
const maxCCImage = 5 << 20

// ccInput is one parsed line: a user message, or a control request to
// answer (Message nil).
type ccInput struct {
	Message   *llm.Message
	RequestID string
	Subtype   string
}

// ccInputLine is a line of stream-json input as written.
type ccInputLine struct {
	Type      string          `json:"type"`
	Message   json.RawMessage `json:"message"`
	RequestID string          `json:"request_id"`
	Request   json.RawMessage `json:"request"`
	// The SDK's other fields (session_id, parent_tool_use_id) are allowed
	// and unused: the run's session is rein's.
	SessionID       *string `json:"session_id"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	UUID            *string `json:"uuid"`
}

// ccInBlock is a content block of a user message.
type ccInBlock struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Source *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
}

// parseCCInput reads one line of stream-json input. A line that is not a
// user message or control request, or a message rein cannot send, is an
// error saying what is wrong.
func parseCCInput(line []byte) (ccInput, error) {
	var l ccInputLine
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return ccInput{}, fmt.Errorf("not a stream-json input line (want {\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":…}}): %v", err)
	}
	if dec.More() {
		return ccInput{}, errors.New("more than one JSON value on the line: give one message per line")
	}
	switch l.Type {
	case "user":
	case "control_request":
		var req struct {
			Subtype string `json:"subtype"`
		}
		if l.RequestID == "" || json.Unmarshal(l.Request, &req) != nil || req.Subtype == "" {
			return ccInput{}, errors.New("control_request: want request_id and request.subtype")
		}
		return ccInput{RequestID: l.RequestID, Subtype: req.Subtype}, nil
	case "":
		return ccInput{}, errors.New(`missing "type": want "user"`)
	default:
		return ccInput{}, fmt.Errorf("type %q: rein reads user messages (\"type\":\"user\") and control requests", clip(l.Type, 40))
	}
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if len(l.Message) == 0 || json.Unmarshal(l.Message, &m) != nil {
		return ccInput{}, errors.New(`"message": want {"role":"user","content":"…"}`)
	}
	if m.Role != "user" {
		return ccInput{}, fmt.Errorf("message.role %q: want \"user\"", clip(m.Role, 40))
	}
	msg := llm.Message{Role: llm.RoleUser}
	var text string
	if err := json.Unmarshal(m.Content, &text); err == nil {
		if strings.TrimSpace(text) == "" {
			return ccInput{}, errors.New("message.content is empty: give the prompt")
		}
		msg.Content = []llm.Block{&llm.Text{Text: text}}
		return ccInput{Message: &msg}, nil
	}
	var blocks []ccInBlock
	if err := json.Unmarshal(m.Content, &blocks); err != nil {
		return ccInput{}, errors.New("message.content: want a string or a list of text and image blocks")
	}
	for i, b := range blocks {
		switch b.Type {
		case "text":
			if b.Text != "" {
				msg.Content = append(msg.Content, &llm.Text{Text: b.Text})
			}
		case "image":
			img, err := ccImage(b)
			if err != nil {
				return ccInput{}, fmt.Errorf("message.content[%d]: %v", i, err)
			}
			msg.Content = append(msg.Content, img)
		default:
			return ccInput{}, fmt.Errorf("message.content[%d]: block type %q: rein reads text and image blocks", i, clip(b.Type, 40))
		}
	}
	if msg.Empty() {
		return ccInput{}, errors.New("message.content is empty: give the prompt")
	}
	return ccInput{Message: &msg}, nil
}

// ccImage reads an image block with a base64 source.
func ccImage(b ccInBlock) (*llm.Image, error) {
	if b.Source == nil || b.Source.Type != "base64" {
		return nil, errors.New(`image: want "source":{"type":"base64","media_type":…,"data":…}`)
	}
	switch b.Source.MediaType {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
	default:
		return nil, fmt.Errorf("image media_type %q: want image/png, image/jpeg, image/gif or image/webp", clip(b.Source.MediaType, 40))
	}
	if base64.StdEncoding.DecodedLen(len(b.Source.Data)) > maxCCImage+3 {
		return nil, errors.New("image: more than 5 MiB")
	}
	data, err := base64.StdEncoding.DecodeString(b.Source.Data)
	if err != nil {
		return nil, fmt.Errorf("image data: not base64: %v", err)
	}
	if len(data) == 0 || len(data) > maxCCImage {
		return nil, fmt.Errorf("image: %d bytes; want 1 byte to 5 MiB", len(data))
	}
	return &llm.Image{MediaType: b.Source.MediaType, Data: data}, nil
}

// ccControlResponse answers a control request.
type ccControlResponse struct {
	Type     string        `json:"type"`
	Response ccControlBody `json:"response"`
}

// ccControlBody is the response object of a control_response.
type ccControlBody struct {
	Subtype   string          `json:"subtype"`
	RequestID string          `json:"request_id"`
	Response  json.RawMessage `json:"response,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// controlResponse answers the control request of in: initialize
// succeeds (rein needs nothing from it); any other is not supported.
func controlResponse(in ccInput) ccControlResponse {
	r := ccControlBody{Subtype: "success", RequestID: in.RequestID}
	if in.Subtype == "initialize" {
		r.Response = json.RawMessage(`{}`)
	} else {
		r.Subtype, r.Error = "error", fmt.Sprintf("rein does not support the control request %q", clip(in.Subtype, 40))
	}
	return ccControlResponse{Type: "control_response", Response: r}
}

// ccInputs reads stream-json input: each user message is given to run in
// turn; control requests are answered on out. A bad line stops the input
// with an error naming its line number.
func ccInputs(r io.Reader, out io.Writer, run func(*llm.Message) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxCCInputLine)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		in, err := parseCCInput(line)
		if err != nil {
			return usageErrorf("--input-format stream-json: line %d: %v", n, err)
		}
		if in.Message == nil {
			b, err := jsonLine(controlResponse(in))
			if err != nil {
				return err
			}
			if _, err := out.Write(b); err != nil {
				return err
			}
			continue
		}
		if err := run(in.Message); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return usageErrorf("--input-format stream-json: line %d: longer than 10 MB", n+1)
		}
		return fail(ExitError, "reading stdin: %v", err)
	}
	return nil
}
