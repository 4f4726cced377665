package compact

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/reinhq/rein/llm"
)

// vendorCounts are the vendors' context-overflow messages that carry the
// prompt's size: submatch "p" is the prompt's tokens, "l" the model's limit.
var vendorCounts = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		// Anthropic: "prompt is too long: 212345 tokens > 200000 maximum"
		regexp.MustCompile(`(?P<p>\d[\d,]*) tokens? > (?P<l>\d[\d,]*)`),
		// OpenAI Chat: "maximum context length is 128000 tokens. However, you
		// requested 135000 tokens (130000 in the messages, 5000 in the completion)"
		regexp.MustCompile(`maximum context length is (?P<l>\d[\d,]*) tokens.*?\((?P<p>\d[\d,]*) in the messages`),
		// OpenAI Chat: "… However, your messages resulted in 130000 tokens"
		regexp.MustCompile(`maximum context length is (?P<l>\d[\d,]*) tokens.*?resulted in (?P<p>\d[\d,]*) tokens`),
		// Gemini: "The input token count (1200000) exceeds the maximum number of
		// tokens allowed (1048576)."
		regexp.MustCompile(`input token count \(?(?P<p>\d[\d,]*)\)? exceeds the maximum number of tokens allowed \(?(?P<l>\d[\d,]*)`),
		// vLLM, llama.cpp, OpenRouter and others: "… (150000 tokens) exceeds the
		// context length (131072)" and the like.
		regexp.MustCompile(`(?P<p>\d[\d,]*) (?:input )?tokens\)? (?:exceeds?|is greater than|is more than) (?:the )?(?:maximum |model's )?(?:context length|context window|maximum)[^\d]{0,40}(?P<l>\d[\d,]*)`),
	}
})

// VendorCount reads the prompt's size and the model's limit, in tokens, from
// a context-overflow error's vendor message; 0 for what it does not say.
func VendorCount(err error) (prompt, limit int) {
	e, ok := llm.AsError(err)
	if !ok || e.Kind != llm.KindContextOverflow {
		return 0, 0
	}
	msg := e.Message
	if e.Err != nil {
		msg += " " + e.Err.Error()
	}
	for _, re := range vendorCounts() {
		m := re.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		for i, name := range re.SubexpNames() {
			n, _ := strconv.Atoi(strings.ReplaceAll(m[i], ",", ""))
			switch name {
			case "p":
				prompt = n
			case "l":
				limit = n
			}
		}
		if prompt > 0 {
			return prompt, limit
		}
	}
	return 0, 0
}

// overflowObs is what the last context-overflow error said about a request.
type overflowObs struct {
	keys          []msgKey
	prompt, limit int
}

// ObserveOverflow records the context-overflow error the provider returned
// for a request holding sent (the history as stored), so that the
// [Compactor.Overflow] that follows takes the provider's count as the truth
// (SPEC PROV-7, CTX-1): the prompt size the vendor's message states, and its
// limit when smaller than the configured window. An error that states no
// count is recorded too; Overflow then assumes the estimate was low by
// enough to exceed the window.
func (c *Compactor) ObserveOverflow(sent []llm.Message, err error) {
	prompt, limit := VendorCount(err)
	c.mu.Lock()
	defer c.mu.Unlock()
	o := overflowObs{prompt: prompt, limit: limit}
	for i := range sent {
		o.keys = append(o.keys, keyOf(&sent[i]))
	}
	c.overflow = o
	c.cfg.Logger.Debug("compact: the provider rejected the prompt as too long",
		"vendor_prompt_tokens", prompt, "vendor_limit", limit, "messages", len(sent))
}

// takeOverflow returns and forgets the count ObserveOverflow recorded, when
// it was for msgs.
func (c *Compactor) takeOverflow(msgs []llm.Message) (prompt, limit int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.overflow
	c.overflow = overflowObs{}
	if len(o.keys) != len(msgs) {
		return 0, 0
	}
	for i, k := range o.keys {
		if keyOf(&msgs[i]) != k {
			return 0, 0
		}
	}
	return o.prompt, o.limit
}

// calibrate sets the pass's scale after a context-overflow error: the
// provider's count when its message gave one, else the smallest undercount
// that explains the rejection (the prompt held at least the window minus
// the requested output). The estimate is raw (no reported usage in it), so
// the scale applies alike to every history the pass measures.
func (p *pass) calibrate() {
	prompt, limit := p.c.takeOverflow(p.req.Messages)
	if limit > 0 && limit < p.cfg.ContextWindow {
		p.window = limit
		p.measure()
	}
	p.vendorPrompt = prompt
	if prompt > 0 {
		if msgs := prompt - p.b.System - p.b.Tools; msgs > p.b.Messages && p.b.Messages > 0 {
			p.scale = float64(msgs) / float64(p.b.Messages)
		}
		return
	}
	p.scale = overflowScale(p.b, p.req)
}

// overflowScale returns how much the estimate of b must undercount, given
// that the provider rejected the prompt: it held at least the window minus
// the requested output, and at least more than the budget lets the messages
// use (else the estimate would not have let it through).
func overflowScale(b Budget, req *llm.Request) float64 {
	floor := max(b.Window-max(req.MaxTokens, 0), b.Window-b.Reserve+1)
	prompt := b.Prompt()
	if prompt <= 0 || floor <= prompt {
		return 1
	}
	return float64(floor) / float64(prompt)
}

// newestTooBig reports the size of the newest message, its tool outputs and
// inputs shrunk, when it alone cannot fit the budget: no compaction of the
// messages before it can help then (SPEC CTX-6).
func (p *pass) newestTooBig() (int, bool) {
	n := len(p.msgs)
	if n == 0 {
		return 0, false
	}
	last, _, _ := shrink(p.msgs, n-1, n, p.cfg)
	size := p.scaled(p.size(last[n-1:]))
	if n > 1 {
		size += messageOverhead // the summary before it costs at least its framing
	}
	return size, size > p.b.Budget
}

// budgetNote describes the budget for an error message.
func (p *pass) budgetNote() string {
	return fmt.Sprintf("a budget of %d tokens for messages (window %d, reserved output %d, system prompt %d, tools %d)",
		p.b.Budget, p.b.Window, p.b.Reserve, p.b.System, p.b.Tools)
}

// newestError is the error when the newest message alone does not fit.
func (p *pass) newestError(size int) error {
	return &llm.Error{Kind: llm.KindContextOverflow,
		Message: fmt.Sprintf("the newest message alone is ~%d tokens, more than %s; nothing was compacted, since compacting older messages cannot make it fit",
			size, p.budgetNote()),
		Hint: "send a shorter message (attach large content as a file the agent can read), or use a model with a larger context window"}
}

// overflowError is the error when the history still does not fit; it says
// which layers ran, or that none could.
func (p *pass) overflowError() error {
	what := "nothing could be compacted"
	if len(p.layers) > 0 {
		what = "even after compaction (" + strings.Join(p.layers, ", ") + ")"
	}
	if p.b.Budget <= 0 {
		what = "the system prompt and tool definitions leave no room for messages"
	}
	return &llm.Error{Kind: llm.KindContextOverflow,
		Message: fmt.Sprintf("the conversation does not fit the context window, %s: ~%d tokens of messages for %s",
			what, p.used(), p.budgetNote()),
		Hint: "start a new session, shorten the system prompt or tool list, or use a model with a larger context window"}
}
