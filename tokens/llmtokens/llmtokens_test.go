package llmtokens_test

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tokens/llmtokens"
)

// TestOpaqueCounted: an opaque block (a server tool's search results) is
// counted by its size, so the compactor's budget sees what the provider
// reads back (issue 23).
func TestOpaqueCounted(t *testing.T) {
	raw := []byte(`{"type":"web_search_tool_result","content":"` + strings.Repeat("result text ", 400) + `"}`)
	n := llmtokens.Block(&llm.Opaque{Provider: "anthropic", Type: "web_search_tool_result", Raw: raw}, 0)
	if n < len(raw)/8 {
		t.Errorf("estimate %d tokens for %d bytes of JSON", n, len(raw))
	}
}
