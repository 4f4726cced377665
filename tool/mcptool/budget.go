package mcptool

import (
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool"
)

// The default budget of MCP tool definitions in one model request (SPEC
// MCP-2), across all servers: settings mcp.max_tools and mcp.max_tool_bytes.
const (
	DefaultMaxTools = 64
	DefaultMaxBytes = 64 << 10
)

// Budget bounds the MCP tool definitions sent with each model request.
// Within it, every MCP tool is offered up front; above it, none is: the
// model gets the search tool ([NewSearch]) and loads what it needs, up to
// the same budget.
type Budget struct {
	// MaxTools is the most MCP tool definitions in a request; 0 means
	// [DefaultMaxTools].
	MaxTools int
	// MaxBytes is the most bytes of MCP tool definitions (name,
	// description and input schema as JSON) in a request; 0 means
	// [DefaultMaxBytes].
	MaxBytes int
}

func (b Budget) withDefaults() Budget {
	if b.MaxTools <= 0 {
		b.MaxTools = DefaultMaxTools
	}
	if b.MaxBytes <= 0 {
		b.MaxBytes = DefaultMaxBytes
	}
	return b
}

// String is the budget in words.
func (b Budget) String() string {
	b = b.withDefaults()
	return fmt.Sprintf("%d tools / %s of definitions", b.MaxTools, kib(b.MaxBytes))
}

// Fits reports whether every one of tools fits in the budget at once.
func (b Budget) Fits(tools []tool.Tool) bool {
	b = b.withDefaults()
	if len(tools) > b.MaxTools {
		return false
	}
	n := 0
	for _, t := range tools {
		n += SpecSize(t.Spec())
	}
	return n <= b.MaxBytes
}

// SpecSize is the size in bytes of a tool definition as sent to the model:
// its name, description and input schema, as JSON.
func SpecSize(s llm.ToolSpec) int {
	b, err := json.Marshal(struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}{s.Name, s.Description, s.InputSchema})
	if err != nil {
		return len(s.Name) + len(s.Description) + len(s.InputSchema)
	}
	return len(b)
}

// kib is n bytes in KiB, or bytes under one.
func kib(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.0f KiB", float64(n)/1024)
}
