package jsonevents

import (
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tokens"
)

// Fixed costs of the wire format around content, in tokens, as package
// compact counts them.
const (
	messageOverhead = 4    // role and message framing
	blockOverhead   = 2    // a content block's type and framing
	toolOverhead    = 8    // a tool call's or result's framing and id fields
	specOverhead    = 8    // one tool definition's framing
	imageTokens     = 1600 // one image
)

// EstimateUsage estimates the usage of a call that sent req and got msg
// back, for a reply whose vendor reported no usage (an OpenAI-compatible
// server that ignores stream_options, a proxy that drops the usage chunk):
// a reply is never reported as costing nothing. Input is the system prompt,
// the tool definitions and the messages; output is msg's blocks, its
// thinking counted as reasoning too. The result has Estimated set.
func EstimateUsage(req *llm.Request, msg *llm.Message) llm.Usage {
	u := llm.Usage{Estimated: true}
	if req != nil {
		in := tokens.Estimate(req.System)
		for _, t := range req.Tools {
			in += specOverhead + tokens.Estimate(t.Name) + tokens.Estimate(t.Description) + tokens.EstimateBytes(t.InputSchema)
		}
		for i := range req.Messages {
			in += messageOverhead + blocks(req.Messages[i].Content, nil)
		}
		u.InputTokens = int64(in)
	}
	if msg != nil {
		var reasoning int
		u.OutputTokens = int64(blocks(msg.Content, &reasoning))
		u.ReasoningTokens = int64(reasoning)
	}
	return u
}

// blocks estimates content blocks; reasoning, when not nil, gets the part
// spent on thinking added.
func blocks(bs []llm.Block, reasoning *int) int {
	n := 0
	for _, b := range bs {
		switch b := b.(type) {
		case *llm.Text:
			n += blockOverhead + tokens.Estimate(b.Text)
		case *llm.Image:
			n += imageTokens
		case *llm.Thinking:
			t := tokens.Estimate(b.Text)
			if b.Redacted {
				t = len(b.Signature) / 4
			}
			n += blockOverhead + t
			if reasoning != nil {
				*reasoning += t
			}
		case *llm.ToolUse:
			n += toolOverhead + tokens.Estimate(b.Name) + tokens.EstimateBytes(b.Input)
		case *llm.ToolResult:
			n += toolOverhead + blocks(b.Content, nil)
		default:
			n += blockOverhead
		}
	}
	return n
}
