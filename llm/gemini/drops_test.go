package gemini_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/gemini"
)

// TestDroppedParts: parts rein has no block for (code execution's
// executableCode and codeExecutionResult, recorded in the API's wire format
// in testdata/streams) are not kept, but no longer vanish silently: each is
// counted by its type (issue 23), and the text around them is kept.
func TestDroppedParts(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "streams", "code_execution.sse"))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	defer ts.Close()
	code, result := llm.DropsOf("google", llm.DropBlock, "executableCode"), llm.DropsOf("google", llm.DropBlock, "codeExecutionResult")
	empty := llm.DropsOf("google", llm.DropBlock, "")
	p := gemini.New(gemini.Config{APIKey: testKey, BaseURL: ts.URL})
	resp, err := llm.Complete(t.Context(), p, &llm.Request{Model: model, Messages: []llm.Message{llm.UserText("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Message.TextOf(); got != "Let me compute.It is 1024." {
		t.Errorf("text %q", got)
	}
	if llm.DropsOf("google", llm.DropBlock, "executableCode") != code+1 || llm.DropsOf("google", llm.DropBlock, "codeExecutionResult") != result+1 {
		t.Error("the code execution parts were not counted")
	}
	if llm.DropsOf("google", llm.DropBlock, "") != empty {
		t.Error("a part with nothing in it was counted")
	}
}
