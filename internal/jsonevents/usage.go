package jsonevents

import (
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tokens"
	"github.com/reinhq/rein/tokens/llmtokens"
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
		in := tokens.Estimate(req.System) + llmtokens.Tools(req.Tools)
		for i := range req.Messages {
			in += llmtokens.Message(&req.Messages[i], llmtokens.ImageTokens)
		}
		u.InputTokens = int64(in)
	}
	if msg != nil {
		for _, b := range msg.Content {
			u.OutputTokens += int64(llmtokens.Block(b, llmtokens.ImageTokens))
			if t, ok := b.(*llm.Thinking); ok {
				u.ReasoningTokens += int64(llmtokens.Thinking(t))
			}
		}
	}
	return u
}
