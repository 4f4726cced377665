package compact

import (
	"bytes"
	"context"
	"iter"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tokens"
	"github.com/reinhq/rein/tokens/llmtokens"
)

// The wire format's fixed costs, as package llmtokens counts them.
const (
	messageOverhead = llmtokens.MessageOverhead
	blockOverhead   = llmtokens.BlockOverhead
	toolOverhead    = llmtokens.ToolOverhead
	specOverhead    = llmtokens.SpecOverhead
)

// Budget is how full a request's context is (SPEC CTX-2). Budget is what the
// messages may use: the window minus the reserved output, the system prompt
// and the tool definitions.
type Budget struct {
	Window, Reserve, System, Tools int
	// Budget = Window - Reserve - System - Tools.
	Budget int
	// Messages is the size of the history: the provider's count for the part
	// it last reported on plus estimates for the messages added since.
	Messages int
	// Reported is set when a provider-reported count stands in for part of
	// the estimate.
	Reported bool
}

// Prompt is the size of the whole prompt: system, tools and messages.
func (b Budget) Prompt() int { return b.System + b.Tools + b.Messages }

// Fraction is the share of the budget the messages use.
func (b Budget) Fraction() float64 {
	if b.Budget <= 0 {
		return 1
	}
	return float64(b.Messages) / float64(b.Budget)
}

// msgKey identifies a message's content without reading it: the address of
// its first block slot and its block count (the role does not change an
// estimate, so it is not part of the key). Messages are values whose blocks
// are never changed in place (the loop only appends; every rewrite, here and
// in package llm, builds new Content slices), so an equal key means the same
// content. Holding the pointer keeps the slot alive: it cannot be reused by
// another message while cached.
type msgKey struct {
	first *llm.Block
	n     int
}

func keyOf(m *llm.Message) msgKey {
	k := msgKey{n: len(m.Content)}
	if len(m.Content) > 0 {
		k.first = &m.Content[0]
	}
	return k
}

type cachedMsg struct {
	key    msgKey
	tokens int
}

// estimator estimates requests, caching message estimates by position and
// identity, and remembers the last provider-reported prompt size. It is
// guarded by its Compactor's mutex.
type estimator struct {
	imageTokens int
	msgs        []cachedMsg

	system       string
	systemTokens int
	tools        []llm.ToolSpec
	toolTokens   int
	toolsSet     bool

	// obs holds the keys of the messages the last reported usage covered,
	// obsTokens the prompt size the provider reported for them.
	obs       []msgKey
	obsTokens int
}

// messages returns the estimated size of msgs, refreshing the cache; after
// it, e.msgs[i].tokens is the estimate of msgs[i].
func (e *estimator) messages(msgs []llm.Message) int {
	if cap(e.msgs) < len(msgs) {
		grown := make([]cachedMsg, len(e.msgs), len(msgs)+len(msgs)/4)
		copy(grown, e.msgs)
		e.msgs = grown
	}
	old := len(e.msgs)
	e.msgs = e.msgs[:len(msgs)]
	total := 0
	for i := range msgs {
		k := keyOf(&msgs[i])
		c := &e.msgs[i]
		if i >= old || c.key != k {
			*c = cachedMsg{key: k, tokens: e.message(&msgs[i])}
		}
		total += c.tokens
	}
	return total
}

// sum returns the cached estimates of messages [from, to); call messages first.
func (e *estimator) sum(from, to int) int {
	n := 0
	for _, c := range e.msgs[from:to] {
		n += c.tokens
	}
	return n
}

func (e *estimator) message(m *llm.Message) int {
	return llmtokens.Message(m, e.imageTokens)
}

// systemSize returns the estimate of the system prompt, cached.
func (e *estimator) systemSize(s string) int {
	if s != e.system {
		e.system, e.systemTokens = s, tokens.Estimate(s)
	}
	return e.systemTokens
}

// toolsSize returns the estimate of the tool definitions, cached.
func (e *estimator) toolsSize(specs []llm.ToolSpec) int {
	if e.toolsSet && sameSpecs(e.tools, specs) {
		return e.toolTokens
	}
	n := llmtokens.Tools(specs)
	e.tools = append(e.tools[:0], specs...)
	e.toolTokens, e.toolsSet = n, true
	return n
}

func sameSpecs(a, b []llm.ToolSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || !bytes.Equal(a[i].InputSchema, b[i].InputSchema) {
			return false
		}
	}
	return true
}

// observe records that the provider counted prompt tokens for a request
// holding msgs.
func (e *estimator) observe(msgs []llm.Message, prompt int) {
	e.obs = e.obs[:0]
	for i := range msgs {
		e.obs = append(e.obs, keyOf(&msgs[i]))
	}
	e.obsTokens = prompt
}

// reported returns the provider's count for the prefix of msgs it covered
// and the prefix's length, when msgs still starts with those messages.
func (e *estimator) reported(msgs []llm.Message) (prompt, prefix int, ok bool) {
	if e.obsTokens <= 0 || len(e.obs) == 0 || len(e.obs) > len(msgs) {
		return 0, 0, false
	}
	for i, k := range e.obs {
		if keyOf(&msgs[i]) != k {
			return 0, 0, false
		}
	}
	return e.obsTokens, len(e.obs), true
}

// measure returns the budget of req with msgs as its messages, with the
// provider's last reported count standing in for the prefix it covered when
// reported is set. Call with c.mu held.
func (c *Compactor) measure(req *llm.Request, msgs []llm.Message, reported bool) Budget {
	e := &c.est
	b := Budget{
		Window:  c.cfg.ContextWindow,
		Reserve: c.cfg.reserve(req),
		System:  e.systemSize(req.System),
		Tools:   e.toolsSize(req.Tools),
	}
	b.Budget = b.Window - b.Reserve - b.System - b.Tools
	b.Messages = e.messages(msgs)
	if prompt, prefix, ok := e.reported(msgs); ok && reported {
		b.Messages = max(0, prompt-b.System-b.Tools) + e.sum(prefix, len(msgs))
		b.Reported = true
	}
	return b
}

// Measure returns how full req's context is, for a front end's "context
// used" display.
func (c *Compactor) Measure(req *llm.Request) Budget {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.measure(req, req.Messages, true)
}

// ObserveUsage records the prompt size a provider reported for a request
// holding msgs (SPEC CTX-1: reported usage replaces the estimate). Until the
// history stops starting with msgs (a compaction, another conversation), the
// history's size is that count plus estimates of the messages added since.
// A usage without a prompt count is ignored.
func (c *Compactor) ObserveUsage(msgs []llm.Message, u llm.Usage) {
	p := u.PromptTokens()
	if p <= 0 || u.Estimated {
		return // an adapter's own estimate is no count to calibrate on (CTX-1)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.est.observe(msgs, int(p))
}

// Observe returns p reporting the usage of every completed reply to
// [Compactor.ObserveUsage]: give it to agent.Config.Provider to wire the
// provider's counts into the budget check.
func (c *Compactor) Observe(p llm.Provider) llm.Provider {
	return llm.ProviderFunc(func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		return func(yield func(llm.Delta, error) bool) {
			for d, err := range p.Stream(ctx, req) {
				if err == nil && d.Kind == llm.DeltaDone && d.Response != nil {
					c.ObserveUsage(req.Messages, d.Response.Usage)
				}
				if !yield(d, err) || err != nil {
					return
				}
			}
		}
	})
}
