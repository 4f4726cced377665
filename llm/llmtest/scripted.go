// Package llmtest holds what rein's tests need to talk to "a model" without a
// network: [Scripted], an in-process provider that plays back replies, and
// [RunConformance], the suite every vendor adapter passes against the mock
// vendor server of package mockserver (SPEC PROV-9).
package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"sync"

	"github.com/reinhq/rein/llm"
)

// Reply is one scripted model reply.
type Reply struct {
	Thinking string
	// ThinkingSignature is stamped on the thinking block.
	ThinkingSignature string
	Text              string
	ToolCalls         []llm.ToolUse
	// Stop defaults to tool_use when there are tool calls, else end_turn.
	Stop  llm.StopReason
	Usage llm.Usage
	// Err, when set, is yielded after the reply's deltas instead of Done: a
	// stream that failed part way (a tool call it announced never completes).
	Err error
	// Hang blocks after the first delta until ctx is done, then yields the
	// context's error: a stream cancelled mid-way.
	Hang bool
	// Chunk cuts text and tool input into pieces of this many bytes; 0 sends
	// each whole.
	Chunk int
	// Func, when set, replaces everything above: it gets the request and
	// returns the stream.
	Func func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error]
}

// Scripted is an in-process [llm.Provider] that plays replies in order and
// records every request. It is safe for concurrent use. When the script runs
// out, Stream fails with an error saying so.
type Scripted struct {
	// Name is stamped on replies as their provider; default "scripted".
	Name string
	// Repeat, when set, is played whenever the script is exhausted (for
	// benchmarks and long runs).
	Repeat *Reply
	// NoRecord skips recording requests (long runs and benchmarks, where the
	// copies would dominate memory).
	NoRecord bool

	mu       sync.Mutex
	replies  []Reply
	requests []*llm.Request
}

// NewScripted returns a provider that plays replies.
func NewScripted(replies ...Reply) *Scripted {
	return &Scripted{replies: replies}
}

// Push appends replies to the script.
func (s *Scripted) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Requests returns the requests received so far. Each is a copy taken when it
// arrived, so later changes by the caller do not show.
func (s *Scripted) Requests() []*llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*llm.Request(nil), s.requests...)
}

// Pending returns the number of replies not yet played.
func (s *Scripted) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies)
}

func (s *Scripted) next(req *llm.Request) (Reply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.NoRecord {
		cp := *req
		cp.Messages = append([]llm.Message(nil), req.Messages...)
		s.requests = append(s.requests, &cp)
	}
	if len(s.replies) == 0 {
		if s.Repeat != nil {
			return *s.Repeat, nil
		}
		return Reply{}, fmt.Errorf("llmtest: script exhausted after %d requests", len(s.requests))
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return r, nil
}

// Stream plays the next reply.
func (s *Scripted) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	return func(yield func(llm.Delta, error) bool) {
		r, err := s.next(req)
		if err != nil {
			yield(llm.Delta{}, err)
			return
		}
		if r.Func != nil {
			for d, err := range r.Func(ctx, req) {
				if !yield(d, err) || err != nil {
					return
				}
			}
			return
		}
		name := s.Name
		if name == "" {
			name = "scripted"
		}
		s.play(ctx, r, name, req.Model, yield)
	}
}

func (s *Scripted) play(ctx context.Context, r Reply, name, model string, yield func(llm.Delta, error) bool) {
	if err := ctx.Err(); err != nil {
		yield(llm.Delta{}, &llm.Error{Kind: llm.KindCancelled, Provider: name, Err: err})
		return
	}
	sent := 0
	emit := func(d llm.Delta) bool {
		if !yield(d, nil) {
			return false
		}
		sent++
		if r.Hang && sent == 1 {
			<-ctx.Done()
			yield(llm.Delta{}, &llm.Error{Kind: llm.KindCancelled, Provider: name, Err: ctx.Err()})
			return false
		}
		return true
	}
	msg := llm.Message{Role: llm.RoleAssistant, Provider: name, Model: model}
	if r.Thinking != "" || r.ThinkingSignature != "" {
		for _, c := range cut(r.Thinking, r.Chunk) {
			if !emit(llm.Delta{Kind: llm.DeltaThinking, Text: c}) {
				return
			}
		}
		msg.Content = append(msg.Content, &llm.Thinking{Text: r.Thinking, Signature: r.ThinkingSignature})
	}
	if r.Text != "" {
		for _, c := range cut(r.Text, r.Chunk) {
			if !emit(llm.Delta{Kind: llm.DeltaText, Text: c}) {
				return
			}
		}
		msg.Content = append(msg.Content, &llm.Text{Text: r.Text})
	}
	for _, tc := range r.ToolCalls {
		u := tc
		if len(u.Input) == 0 {
			u.Input = json.RawMessage("{}")
		}
		if !emit(llm.Delta{Kind: llm.DeltaToolStart, ToolUseID: u.ID, ToolName: u.Name}) {
			return
		}
		for _, c := range cut(string(u.Input), r.Chunk) {
			if !emit(llm.Delta{Kind: llm.DeltaToolInput, ToolUseID: u.ID, Text: c}) {
				return
			}
		}
		msg.Content = append(msg.Content, &u)
	}
	if r.Err != nil {
		yield(llm.Delta{}, r.Err)
		return
	}
	stop := r.Stop
	if stop == "" {
		stop = llm.StopEndTurn
		if len(r.ToolCalls) > 0 {
			stop = llm.StopToolUse
		}
	}
	yield(llm.Delta{Kind: llm.DeltaDone, Response: &llm.Response{Message: msg, StopReason: stop, Usage: r.Usage}}, nil)
}

func cut(s string, n int) []string {
	if s == "" {
		return nil
	}
	if n <= 0 || n >= len(s) {
		return []string{s}
	}
	out := make([]string, 0, len(s)/n+1)
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// Call returns a tool call for a reply's ToolCalls.
func Call(id, name, input string) llm.ToolUse {
	return llm.ToolUse{ID: id, Name: name, Input: json.RawMessage(input)}
}

// LastUserText is the first text block of the request's last user message
// with text: what a scripted reply usually answers.
func LastUserText(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role != llm.RoleUser {
			continue
		}
		for _, b := range req.Messages[i].Content {
			if t, ok := b.(*llm.Text); ok {
				return t.Text
			}
		}
	}
	return ""
}
