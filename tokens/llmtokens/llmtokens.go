// Package llmtokens estimates the tokens of rein's message model without a
// network call (SPEC CTX-1): content by [tokens.Estimate], plus the wire
// format's fixed costs around it. The compactor's budget and an adapter's
// usage estimate (for a reply whose vendor reported none) count alike.
package llmtokens

import (
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tokens"
)

// Fixed costs of the wire format around content, in tokens.
const (
	MessageOverhead = 4    // role and message framing
	BlockOverhead   = 2    // a content block's type and framing
	ToolOverhead    = 8    // a tool call's or result's framing and id fields
	SpecOverhead    = 8    // one tool definition's framing
	ImageTokens     = 1600 // one image, when the caller knows no better
)

// Block estimates one content block; an image counts imageTokens.
func Block(b llm.Block, imageTokens int) int {
	switch b := b.(type) {
	case *llm.Text:
		return BlockOverhead + tokens.Estimate(b.Text)
	case *llm.Image:
		return imageTokens
	case *llm.Thinking:
		return BlockOverhead + Thinking(b)
	case *llm.ToolUse:
		return ToolOverhead + tokens.Estimate(b.ID) + tokens.Estimate(b.Name) + tokens.EstimateBytes(b.Input)
	case *llm.Opaque:
		// A server tool's call or result (search results, code output):
		// its JSON is what the provider reads back.
		return BlockOverhead + tokens.EstimateBytes(b.Raw)
	case *llm.ToolResult:
		n := ToolOverhead + tokens.Estimate(b.ToolUseID)
		for _, c := range b.Content {
			n += Block(c, imageTokens)
		}
		return n
	}
	return BlockOverhead
}

// Thinking estimates a thinking block's content: its text, or for a
// redacted one its encrypted payload.
func Thinking(b *llm.Thinking) int {
	if b.Redacted {
		return len(b.Signature) / 4
	}
	return tokens.Estimate(b.Text)
}

// Message estimates a message: its framing and its blocks.
func Message(m *llm.Message, imageTokens int) int {
	n := MessageOverhead
	for _, b := range m.Content {
		n += Block(b, imageTokens)
	}
	return n
}

// Tools estimates the tool definitions of a request.
func Tools(specs []llm.ToolSpec) int {
	n := 0
	for _, t := range specs {
		n += SpecOverhead + tokens.Estimate(t.Name) + tokens.Estimate(t.Description) + tokens.EstimateBytes(t.InputSchema)
	}
	return n
}
