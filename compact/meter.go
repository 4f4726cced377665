package compact

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tokens"
)

// CacheMeter prices a sequence of requests the way a prompt cache serves
// them (SPEC CTX-5): each request is cut into segments — the system prompt,
// the tool definitions, then each content block of each message — and the
// longest run of leading segments identical to the previous request's is a
// cache read; the rest is uncached. A request that keeps fewer leading
// segments than the previous one had rewrote the cached prefix: a
// [PrefixBreak]. bench/economy and this package's tests share it, so the
// breaks a test counts are the breaks the benchmark reports. The zero value
// is ready to use; it is not safe for concurrent use.
type CacheMeter struct {
	// Requests counts the requests added.
	Requests int
	// CacheRead and Uncached are the estimated prompt tokens (package
	// tokens) served from the cache and paid in full, over every request.
	CacheRead, Uncached int
	// Bytes is the sum of the requests' segment bytes.
	Bytes int64
	// Breaks lists every request that rewrote the cached prefix.
	Breaks []PrefixBreak

	// prev and prevMsgs are the last conversation request's segments and
	// messages.
	prev     []string
	prevMsgs []llm.Message
}

// PrefixBreak is one rewrite of the cached prefix: request Request (0-based)
// kept only the first Segment of the previous request's Of segments. Message
// and Block locate that first differing segment in the previous request's
// messages (-1 when it is the system prompt or the tool definitions).
type PrefixBreak struct {
	Request, Segment, Of int
	Message, Block       int
}

// Priced is the cache-priced token count: 0.1 × cache reads + uncached.
func (m *CacheMeter) Priced() float64 { return 0.1*float64(m.CacheRead) + float64(m.Uncached) }

// Add meters req against the conversation request added before it and
// reports whether it broke the cached prefix. A summary request (its last
// message is [SummaryInstruction]) is priced the same way, but it is a
// branch off the conversation, never a break: it reads a prefix of the
// conversation and appends the instruction, and the request after it is
// measured against the conversation request before it.
func (m *CacheMeter) Add(req *llm.Request) (PrefixBreak, bool) {
	segs := Segments(req)
	summary := isSummaryRequest(req)
	common := 0
	for common < len(segs) && common < len(m.prev) && segs[common] == m.prev[common] {
		common++
	}
	for i, s := range segs {
		n := tokens.Estimate(s)
		if i < common {
			m.CacheRead += n
		} else {
			m.Uncached += n
		}
		m.Bytes += int64(len(s))
	}
	m.Requests++
	if summary {
		return PrefixBreak{}, false
	}
	var br PrefixBreak
	broke := common < len(m.prev)
	if broke {
		msg, blk := locate(m.prevMsgs, common)
		br = PrefixBreak{Request: m.Requests - 1, Segment: common, Of: len(m.prev), Message: msg, Block: blk}
		m.Breaks = append(m.Breaks, br)
	}
	m.prev, m.prevMsgs = segs, req.Messages
	return br, broke
}

// isSummaryRequest reports whether req asks for a summary of the
// conversation (see [Compactor]'s summarize layer).
func isSummaryRequest(req *llm.Request) bool {
	n := len(req.Messages)
	return n > 0 && req.Messages[n-1].Role == llm.RoleUser && strings.HasPrefix(req.Messages[n-1].TextOf(), SummaryInstruction)
}

// locate maps segment seg of a request with msgs to its message and block.
func locate(msgs []llm.Message, seg int) (int, int) {
	seg -= 2 // the system prompt and the tool definitions
	if seg < 0 {
		return -1, -1
	}
	for i := range msgs {
		if seg < len(msgs[i].Content) {
			return i, seg
		}
		seg -= len(msgs[i].Content)
	}
	return len(msgs), 0
}

// Segments cuts a request into the units a prompt cache matches: the system
// prompt, the tool definitions, then one string per content block of each
// message (its role included).
func Segments(req *llm.Request) []string {
	specs, _ := json.Marshal(req.Tools)
	out := []string{req.System, string(specs)}
	for _, msg := range req.Messages {
		for _, b := range msg.Content {
			out = append(out, string(msg.Role)+":"+segment(b))
		}
	}
	return out
}

// segment renders one block for Segments.
func segment(b llm.Block) string {
	switch b := b.(type) {
	case *llm.Text:
		return b.Text
	case *llm.Thinking:
		return b.Text + b.Signature
	case *llm.ToolUse:
		return b.ID + b.Name + string(b.Input)
	case *llm.ToolResult:
		var s strings.Builder
		s.WriteString(b.ToolUseID)
		if b.IsError {
			s.WriteString("!error")
		}
		for _, c := range b.Content {
			s.WriteString(segment(c))
		}
		return s.String()
	case *llm.Image:
		// An image stands as its digest: the estimate prices images
		// separately, and the cache compares bytes.
		sum := sha256.Sum256(b.Data)
		return "[image " + b.MediaType + " " + b.URL + " " + hex.EncodeToString(sum[:8]) + "]"
	}
	return ""
}
