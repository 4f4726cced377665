package gemini_test

import (
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/gemini"
	"github.com/reinhq/rein/llm/llmtest"
)

// FuzzStream feeds arbitrary streamGenerateContent replies to the adapter:
// it never panics and always keeps the stream's contract (SPEC PROV-1,
// PROV-2). The seeds hold the shapes of PROV-2: a byte-order mark before
// the chunk holding a tool call, keep-alive events; and parts rein drops
// and counts (issue 23).
func FuzzStream(f *testing.F) {
	call := `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"ls","args":{"p":"."}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3}}`
	for _, s := range []string{
		"\xEF\xBB\xBFdata: " + call + "\r\n\r\n",
		"data:\n\ndata: \n\n: ping\n\ndata: " + call + "\n\n",
		`data: {"candidates":[{"content":{"parts":[{"text":"a","thought":true,"thoughtSignature":"c2ln"}]}}]}` + "\n\ndata: " + call + "\n\n",
		`data: {"error":{"code":429,"message":"slow","status":"RESOURCE_EXHAUSTED"}}` + "\n\n",
		`data: {"promptFeedback":{"blockReason":"SAFETY"}}` + "\n\n",
		// Issue 23: parts rein drops and counts (code execution, inline data).
		`data: {"candidates":[{"content":{"parts":[{"executableCode":{"code":"1"}},{"codeExecutionResult":null},{"inlineData":{"data":"AA=="}},{"text":"x"}]},"finishReason":"STOP"}]}` + "\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p := gemini.New(gemini.Config{APIKey: testKey, BaseURL: "http://vendor.invalid", HTTPClient: llmtest.StaticClient("text/event-stream", body)})
		llmtest.CheckStream(t, p, &llm.Request{Model: model, Messages: []llm.Message{llm.UserText("hi")}})
	})
}
