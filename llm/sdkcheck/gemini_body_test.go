package sdkcheck_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/gemini"
)

// Google Gemini's generateContent, streamed (SPEC PROV-2): rein's body for
// each request of requestTable against the body google.golang.org/genai
// writes for the same request, built below with the SDK's own types.

const geminiModel = "gemini-2.5-pro"

// geminiReply is a minimal stream that ends a request cleanly.
const geminiReply = "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"ok\"}]},\"finishReason\":\"STOP\",\"index\":0}]," +
	"\"usageMetadata\":{\"promptTokenCount\":1,\"candidatesTokenCount\":1,\"totalTokenCount\":2},\"responseId\":\"r0\"}\r\n\r\n"

// newGeminiSDK returns an SDK client of the Gemini Developer API at base,
// with one attempt per call; the config given overrides the GEMINI_* and
// GOOGLE_* variables.
func newGeminiSDK(t *testing.T, base string) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(t.Context(), &genai.ClientConfig{APIKey: testKey, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: base + "/", APIVersion: "v1beta",
			RetryOptions: &genai.HTTPRetryOptions{Attempts: genai.Ptr[int32](1)}}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGeminiRequestBodies(t *testing.T) {
	for _, row := range requestTable(geminiModel, "google") {
		t.Run(row.name, func(t *testing.T) {
			srv := newCaptureServer(t, "text/event-stream", geminiReply)
			p := gemini.New(gemini.Config{APIKey: testKey, BaseURL: srv.URL})
			if _, err := runRein(t.Context(), p, row.req); err != nil {
				t.Fatalf("rein: %v", err)
			}
			got := srv.take(t, "rein")

			contents, config := geminiParams(t, row.req)
			for _, err := range newGeminiSDK(t, srv.URL).Models.GenerateContentStream(t.Context(), row.req.Model, contents, config) {
				if err != nil {
					t.Fatalf("SDK: %v", err)
				}
			}
			ref := srv.take(t, "the SDK")

			comparePlumbing(t, got, ref, "Content-Type", "x-goog-api-key")
			compareBodies(t, "gemini", got.Body, ref.Body)
		})
	}
}

// geminiParams is req as the SDK's contents and config, following
// llm/gemini/doc.go: user turns "user", assistant turns "model"; thinking
// a thought part with its signature, a text-less one's signature put on the
// part after it; calls as functionCall parts with their ids and signatures;
// results as functionResponse {"output"|"error": text} naming their tool;
// images of results moved to a user turn; the schemas as
// parametersJsonSchema; thinking a budget or, for an effort, a level.
func geminiParams(t *testing.T, req *llm.Request) ([]*genai.Content, *genai.GenerateContentConfig) {
	t.Helper()
	var contents []*genai.Content
	names := map[string]string{}
	for _, m := range llm.MoveToolResultImages(req.Messages) {
		c := &genai.Content{Role: genai.RoleUser}
		if m.Role == llm.RoleAssistant {
			c.Role = genai.RoleModel
		}
		var pending []byte
		add := func(p *genai.Part) {
			if pending != nil && p.ThoughtSignature == nil {
				p.ThoughtSignature, pending = pending, nil
			}
			c.Parts = append(c.Parts, p)
		}
		for _, b := range m.Content {
			switch b := b.(type) {
			case *llm.Text:
				if b.Text != "" {
					add(&genai.Part{Text: b.Text})
				}
			case *llm.Image:
				if len(b.Data) == 0 {
					add(&genai.Part{FileData: &genai.FileData{FileURI: b.URL, MIMEType: b.MediaType}})
					continue
				}
				mt := b.MediaType
				if mt == "" {
					// The API needs the data's type: sniffed, as rein's
					// other adapters do.
					mt = http.DetectContentType(b.Data)
				}
				add(&genai.Part{InlineData: &genai.Blob{MIMEType: mt, Data: b.Data}})
			case *llm.Thinking:
				switch {
				case b.Redacted:
				case b.Text == "":
					pending = geminiSignature(t, b.Signature)
				default:
					add(&genai.Part{Text: b.Text, Thought: true, ThoughtSignature: geminiSignature(t, b.Signature)})
				}
			case *llm.ToolUse:
				var args map[string]any
				if len(b.Input) > 0 {
					if err := json.Unmarshal(b.Input, &args); err != nil {
						t.Fatal(err)
					}
				}
				names[b.ID] = b.Name
				add(&genai.Part{FunctionCall: &genai.FunctionCall{ID: b.ID, Name: b.Name, Args: args},
					ThoughtSignature: geminiSignature(t, b.Signature)})
			case *llm.ToolResult:
				var texts []string
				for _, c := range b.Content {
					if tx, ok := c.(*llm.Text); ok {
						texts = append(texts, tx.Text)
					}
				}
				key := "output"
				if b.IsError {
					key = "error"
				}
				add(&genai.Part{FunctionResponse: &genai.FunctionResponse{ID: b.ToolUseID, Name: names[b.ToolUseID],
					Response: map[string]any{key: strings.Join(texts, "\n")}}})
			}
		}
		if n := len(c.Parts); pending != nil && n > 0 && c.Parts[n-1].ThoughtSignature == nil {
			c.Parts[n-1].ThoughtSignature = pending
		}
		if len(c.Parts) > 0 {
			contents = append(contents, c)
		}
	}
	config := &genai.GenerateContentConfig{MaxOutputTokens: int32(req.MaxTokens), StopSequences: req.StopSequences}
	if req.Temperature != nil {
		config.Temperature = genai.Ptr(float32(*req.Temperature))
	}
	if th := req.Thinking; th != nil {
		config.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true}
		switch {
		case th.BudgetTokens != 0:
			config.ThinkingConfig.ThinkingBudget = genai.Ptr(int32(th.BudgetTokens))
		case th.Effort != "":
			config.ThinkingConfig.ThinkingLevel = genai.ThinkingLevel(strings.ToUpper(th.Effort))
		}
	}
	if req.System != "" {
		config.SystemInstruction = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: req.System}}}
	}
	if len(req.Tools) > 0 {
		tool := &genai.Tool{}
		for _, tl := range req.Tools {
			d := &genai.FunctionDeclaration{Name: tl.Name, Description: tl.Description}
			if len(tl.InputSchema) > 0 {
				var schema map[string]any
				if err := json.Unmarshal(tl.InputSchema, &schema); err != nil {
					t.Fatal(err)
				}
				d.ParametersJsonSchema = schema
			}
			tool.FunctionDeclarations = append(tool.FunctionDeclarations, d)
		}
		config.Tools = []*genai.Tool{tool}
	}
	return contents, config
}

// geminiSignature is a stored signature as the bytes Gemini sent: the
// adapter keeps them as standard base64.
func geminiSignature(t *testing.T, s string) []byte {
	t.Helper()
	if s == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("signature %q is not base64: %v", s, err)
	}
	return b
}
