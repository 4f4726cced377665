package compact

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
)

// Compactor keeps a conversation inside the context window; it implements
// agent.Compactor. It is safe for concurrent use; its estimate cache serves
// one conversation best, so give each session its own.
type Compactor struct {
	cfg Config
	mu  sync.Mutex // guards est and overflow; never held during a model call
	est estimator
	// overflow is what the last context-overflow error said (ObserveOverflow).
	overflow overflowObs
}

var _ agent.Compactor = (*Compactor)(nil)

// New returns a compactor for cfg.
func New(cfg Config) *Compactor {
	cfg = cfg.withDefaults()
	return &Compactor{cfg: cfg, est: estimator{imageTokens: cfg.ImageTokens}}
}

// mode says why a compaction runs.
type mode uint8

const (
	modeBudget   mode = iota // Fit: the estimate is above a threshold
	modeOverflow             // Overflow: the provider said the prompt is too long
	modeManual               // Compact: the user asked (/compact)
)

var triggers = [...]agent.CompactionTrigger{modeBudget: agent.TriggerBudget, modeOverflow: agent.TriggerOverflow, modeManual: agent.TriggerManual}

// Fit returns the history to send with req, keeping focus (the run's task
// state, LOOP-11; nil falls back to Config.Focus) in any summary (SPEC CTX-2, CTX-3): req.Messages
// itself, with a nil report, while it fits under the first threshold — the
// history is never rewritten between compactions (CTX-5) — or a compacted
// history and a report of what ran. When even every layer cannot make it fit,
// it returns an *llm.Error of kind llm.KindContextOverflow (CTX-6).
func (c *Compactor) Fit(ctx context.Context, req *llm.Request, focus *agent.Focus) ([]llm.Message, *agent.CompactionEvent, error) {
	return c.run(ctx, req, modeBudget, focus)
}

// Overflow compacts after the provider rejected req as too long, whatever the
// estimate says: it summarises straight away, assumes the estimate undercounts
// by as much as the rejection implies, and collapses when that is still too
// much.
func (c *Compactor) Overflow(ctx context.Context, req *llm.Request, focus *agent.Focus) ([]llm.Message, *agent.CompactionEvent, error) {
	return c.run(ctx, req, modeOverflow, focus)
}

// Compact summarises everything before the recent tail even when the history
// fits, for a manual /compact (SPEC CTX-5). A history too short to have
// anything before its tail comes back unchanged with a nil report.
func (c *Compactor) Compact(ctx context.Context, req *llm.Request, focus *agent.Focus) ([]llm.Message, *agent.CompactionEvent, error) {
	return c.run(ctx, req, modeManual, focus)
}

// pass is one compaction of one request.
type pass struct {
	// task is the run's task state (LOOP-11), kept by every summary.
	task *agent.Focus
	c    *Compactor
	cfg  *Config
	req  *llm.Request
	mode mode
	// msgs is the history as compacted so far; b is its budget.
	msgs []llm.Message
	b    Budget
	// scale multiplies message estimates: above 1 when the provider proved
	// them too low (Overflow).
	scale float64
	// snipped is set once snip rewrote msgs; msgs then still lines up with
	// req.Messages index for index until a summary replaces a prefix.
	snipped bool
	// cause is the first rewrite of the history, for the event (CTX-5);
	// why says what set it off, for the debug log.
	cause, why string
	// summary is the summary written by this pass, once there is one.
	summary   string
	collapsed bool
	layers    []string
	// usage and calls count the summary calls this pass made (SESS-4).
	usage llm.Usage
	calls int
	// raw measures without the provider's last reported usage: an overflow
	// pass scales raw estimates by what the rejection proved (calibrate).
	raw bool
	// window, when set, is the vendor's limit, smaller than the configured
	// window; vendorPrompt is the prompt size the vendor reported.
	window, vendorPrompt int
}

func (c *Compactor) run(ctx context.Context, req *llm.Request, m mode, focus *agent.Focus) ([]llm.Message, *agent.CompactionEvent, error) {
	p := &pass{c: c, cfg: &c.cfg, req: req, mode: m, msgs: req.Messages, scale: 1, task: focus, raw: m == modeOverflow}
	p.measure()
	if m == modeBudget && !p.over(c.cfg.firstThreshold()) {
		return req.Messages, nil, nil
	}
	if p.b.Budget <= 0 {
		return nil, nil, p.overflowError()
	}
	if m == modeOverflow {
		p.calibrate()
	}
	if size, big := p.newestTooBig(); big {
		return nil, nil, p.newestError(size)
	}
	before := p.prompt()
	if err := p.layersInOrder(ctx); err != nil {
		return nil, nil, err
	}
	if p.over(1) || (m == modeOverflow && len(p.layers) == 0) {
		return nil, nil, p.overflowError()
	}
	if len(p.layers) == 0 {
		return req.Messages, nil, nil
	}
	p.logRewrite(before)
	c.cfg.Logger.Info("context compacted", "trigger", triggers[m], "layers", p.layers,
		"tokens_before", before, "tokens_after", p.prompt(), "messages_before", len(req.Messages), "messages_after", len(p.msgs),
		"scale", p.scale, "vendor_prompt_tokens", p.vendorPrompt)
	return p.msgs, &agent.CompactionEvent{TokensBefore: before, TokensAfter: p.prompt(), Layers: p.layers, Cause: p.cause,
		Usage: p.usage, ModelCalls: p.calls,
		Trigger: triggers[m], History: p.msgs}, nil
}

// layersInOrder runs snip, summarize and collapse, each while the estimate is
// still above its threshold (CTX-3). A manual compaction skips the threshold
// checks up to the summary. When snip cannot get the history under its low
// watermark — the notes of earlier snips and the newest outputs fill it, so
// the next snip would come a turn or two later, and then every turn — a
// summary takes its place (see pass.snip).
func (p *pass) layersInOrder(ctx context.Context) error {
	if p.mode != modeManual && p.over(p.cfg.Snip) {
		if cut := p.snip(); cut > 0 {
			p.why = fmt.Sprintf("snip could not get under the low watermark (%.0f%% of the budget); a summary replaces the %d messages before the recent tail", 100*p.cfg.SnipTarget, cut)
			if err := p.replace(ctx, cut); err != nil {
				return err
			}
		}
	}
	if p.summary == "" && (p.mode == modeManual || p.over(p.cfg.Summarise)) {
		if err := p.summarise(ctx); err != nil {
			return err
		}
	}
	if p.over(p.cfg.Collapse) {
		return p.collapse(ctx)
	}
	return nil
}

func (p *pass) measure() {
	p.c.mu.Lock()
	p.b = p.c.measure(p.req, p.msgs, !p.raw)
	p.c.mu.Unlock()
	if p.window > 0 && p.window < p.b.Window {
		// The vendor's limit is smaller than the configured window.
		cfg := *p.cfg
		cfg.ContextWindow = p.window
		p.b.Window, p.b.Reserve = p.window, cfg.reserve(p.req)
		p.b.Budget = p.b.Window - p.b.Reserve - p.b.System - p.b.Tools
	}
}

// used is the scaled size of the messages.
func (p *pass) used() int { return int(float64(p.b.Messages) * p.scale) }

// prompt is the scaled size of the whole prompt.
func (p *pass) prompt() int { return p.b.System + p.b.Tools + p.used() }

// over reports whether the messages use more than frac of the budget.
func (p *pass) over(frac float64) bool {
	return float64(p.used()) > frac*float64(p.b.Budget)
}

// snip is layer (a): old large tool outputs keep their head and tail lines.
//
// It snips with hysteresis (SPEC CTX-5): oldest first, whole blocks, down to
// the low watermark SnipTarget rather than just under the threshold, first
// outside the recent tail, then — when that is not enough — inside it up to
// the newest CollapseKeep messages. A snipped output carries a note and is
// never rewritten again. The prefix before the first output it snips stays
// byte for byte, and the turns after it only append until the history grows
// back to the threshold.
//
// When the snips would leave the history above the low watermark (yet
// under the summary watermark, which summarises anyway) and a summary of
// everything before the recent tail would leave less, it returns where that
// tail starts: the caller summarises what lies before it, so the context
// shrinks in one large step rather than by a rewrite every few turns, then
// every turn, as the notes of earlier snips pile up. The tail keeps the
// snips the plan made in it. Otherwise it returns 0.
func (p *pass) snip() int {
	out, outputs, inputs, first := p.msgs, 0, 0, -1
	var snippedAt []int // the messages the plan changed
	for _, keep := range []int{p.cfg.KeepRecent, p.cfg.CollapseKeep} {
		cut := cleanCut(p.msgs, keep)
		for i := 0; i < cut && p.over(p.cfg.SnipTarget); i++ {
			var o, in int
			out, o, in = shrink(out, i, i+1, p.cfg)
			if o+in == 0 {
				continue
			}
			outputs, inputs = outputs+o, inputs+in
			if first < 0 {
				first = i
			}
			snippedAt = append(snippedAt, i)
			p.msgs = out
			p.measure()
		}
	}
	if outputs+inputs == 0 {
		return 0
	}
	p.snipped = true
	if p.over(p.cfg.SnipTarget) && !p.over(p.cfg.Summarise) {
		cut := cleanCut(p.msgs, p.cfg.KeepRecent)
		if cut > 0 && p.scaled(p.tailSize(cut))+p.cfg.SummaryMaxTokens+messageOverhead < p.used() {
			if i, _ := slices.BinarySearch(snippedAt, cut); i < len(snippedAt) {
				// Outputs of the kept tail stay snipped.
				p.cause = fmt.Sprintf("summarize: messages 0-%d replaced by a summary; %d messages of the recent tail snipped", cut-1, len(snippedAt)-i)
				p.addLayer(LayerSnip)
			}
			return cut
		}
	}
	p.why = fmt.Sprintf("over the snip threshold (%.0f%% of the budget); snipped oldest first towards the low watermark (%.0f%%)", 100*p.cfg.Snip, 100*p.cfg.SnipTarget)
	p.noteShrunk(outputs, inputs, first)
	return 0
}

// shrinkRange snips the tool outputs and shrinks the tool inputs of
// p.msgs[from:to], reporting the layers that changed something.
func (p *pass) shrinkRange(from, to int) bool {
	out, outputs, inputs := shrink(p.msgs, from, to, p.cfg)
	if outputs == 0 && inputs == 0 {
		return false
	}
	p.msgs, p.snipped = out, true
	p.noteShrunk(outputs, inputs, from)
	p.measure()
	return true
}

// noteShrunk records the snip layers and logs where the prompt cache
// breaks: at message first, the oldest one rewritten.
func (p *pass) noteShrunk(outputs, inputs, first int) {
	if p.cause == "" {
		p.cause = fmt.Sprintf("snip: %d tool outputs, %d inputs from message %d", outputs, inputs, first)
	}
	if outputs > 0 {
		p.addLayer(LayerSnip)
	}
	if inputs > 0 {
		p.addLayer(LayerSnipInputs)
	}
}

// addLayer records that layer ran, once.
func (p *pass) addLayer(layer string) {
	if !slices.Contains(p.layers, layer) {
		p.layers = append(p.layers, layer)
	}
	if p.cause == "" {
		p.cause = layer
	}
}

// summarise is layer (b): everything before the recent tail becomes one
// summary. When the tail alone would leave the history above the collapse
// threshold, it cuts where collapse would, so one summary serves both.
func (p *pass) summarise(ctx context.Context) error {
	cut := cleanCut(p.msgs, p.cfg.KeepRecent)
	if cut == 0 {
		return nil
	}
	tail := p.scaled(p.tailSize(cut)) + p.cfg.SummaryMaxTokens + messageOverhead
	collapse := false
	if float64(tail) > p.cfg.Collapse*float64(p.b.Budget) {
		if cc := cleanCut(p.msgs, p.cfg.CollapseKeep); cc > cut {
			cut, collapse = cc, true
		}
	}
	p.because(fmt.Sprintf("over the summary watermark (%.0f%% of the budget)", 100*p.cfg.Summarise))
	if err := p.replace(ctx, cut); err != nil {
		return err
	}
	if collapse {
		p.collapsed = true
		p.layers = append(p.layers, LayerCollapse)
	}
	return nil
}

// collapse is layer (c): the summary plus only the last few messages. A
// summary this pass already wrote is extended with an extractive summary of
// the messages collapse drops, without a second model call. When the last
// messages alone are still too big, their tool outputs are snipped too.
func (p *pass) collapse(ctx context.Context) error {
	p.because(fmt.Sprintf("over the collapse threshold (%.0f%% of the budget)", 100*p.cfg.Collapse))
	if !p.collapsed {
		cut := cleanCut(p.msgs, p.cfg.CollapseKeep)
		switch {
		case p.summary != "" && cut > 1:
			text := p.summary + "\n\n" + laterHeader + facts(p.msgs[1:cut], nil)
			p.msgs = withSummary(text, p.msgs[cut:])
			p.summary = text
			p.collapsed = true
		case p.summary == "" && cut > 0:
			if err := p.replace(ctx, cut); err != nil {
				return err
			}
			p.collapsed = true
		}
		if p.collapsed {
			p.layers = append(p.layers, LayerCollapse)
			p.measure()
		}
	}
	if !p.over(p.cfg.Collapse) {
		return nil
	}
	if p.shrinkRange(0, len(p.msgs)) && !p.collapsed {
		p.layers = append(p.layers, LayerCollapse)
		p.collapsed = true
	}
	return nil
}

// replace puts a summary of p.msgs[:cut] in their place.
func (p *pass) replace(ctx context.Context, cut int) error {
	text, layer, err := p.summaryOf(ctx, cut)
	if err != nil {
		return err
	}
	text = withPlan(text, p.focus())
	p.msgs = withSummary(text, p.msgs[cut:])
	p.summary, p.snipped = text, false
	if p.cause == "" {
		p.cause = fmt.Sprintf("%s: messages 0-%d replaced by a summary", layer, cut-1)
	}
	p.layers = append(p.layers, layer)
	p.measure()
	return nil
}

// tailSize returns the estimate of p.msgs[cut:]; p.measure ran on p.msgs.
func (p *pass) tailSize(cut int) int {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	return p.c.est.sum(cut, len(p.msgs))
}

func (p *pass) scaled(n int) int { return int(float64(n) * p.scale) }

// cleanCut returns where a tail of at least keep messages starts, moved back
// to a clean boundary (SPEC CTX-4): msgs[cut] holds no tool results, so the
// tail never starts with a result whose call goes, and no assistant message
// is parted from its results. 0 means nothing lies before the tail.
func cleanCut(msgs []llm.Message, keep int) int {
	cut := len(msgs) - max(keep, 1)
	if cut <= 0 {
		return 0
	}
	for cut > 0 && hasResults(&msgs[cut]) {
		cut--
	}
	return cut
}

func hasResults(m *llm.Message) bool {
	for _, b := range m.Content {
		if _, ok := b.(*llm.ToolResult); ok {
			return true
		}
	}
	return false
}

// because adds reason to what the debug log says set this pass off: the
// first layer's reason, then "still …" for each later one.
func (p *pass) because(reason string) {
	if p.why == "" {
		p.why = reason
		return
	}
	p.why += "; still " + reason
}
