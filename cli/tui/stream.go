package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
)

// renderInterval throttles the re-rendering of streamed markdown (~30 fps).
const renderInterval = 33 * time.Millisecond

// maxBatch is how many queued events one message carries at most.
const maxBatch = 64

// Messages of a run.
type (
	// item is one element of the backend's stream.
	item struct {
		ev  agent.Event
		err error
	}
	// eventsMsg carries the events that arrived since the last one.
	eventsMsg struct {
		seq   int
		items []item
	}
	// askMsg carries a permission question of the run.
	askMsg struct {
		seq int
		ask *ask
	}
	// questionMsg carries an ask_user question of the run.
	questionMsg struct {
		seq int
		q   *question
	}
	// runEndedMsg says the run's stream is over.
	runEndedMsg struct{ seq int }
	// renderTickMsg asks for the streamed text to be rendered again.
	renderTickMsg struct{ seq int }
)

// runState is the run in progress: the goroutine that drains the backend's
// stream (pump), and what the UI shows of the run.
type runState struct {
	seq      int
	cancel   context.CancelFunc
	events   chan item
	asks     chan *ask
	asked    chan *question // ask_user questions on their way to the UI
	stop     chan struct{}  // closed when the UI is gone: events are dropped
	stopped  sync.Once
	finished chan struct{} // closed when the pump has returned

	cancelled bool
	started   time.Time
	base      Info // the session's totals when the run started

	text         string // assistant text not in the scrollback yet
	rendered     string // text as markdown
	dirty        bool   // text changed since it was rendered
	renderQueued bool
	streamed     bool // text deltas arrived for the current message
	anyText      bool // some assistant text was shown
	thinking     string
	tools        []*toolRun
	pendingAsks  []*ask
	questions    []*question // ask_user questions waiting, the shown one first
	retry        string
	tokens       int64
	cost         float64
	lastError    string
	done         *agent.DoneEvent
}

// toolRun is a tool call that has started and not ended.
type toolRun struct {
	id, name, summary string
	input             json.RawMessage // for the diff of an edit
	started           time.Time
	// answer is the user's answer to its permission question, if any.
	answer string
}

// stopOnce closes stop once.
func (r *runState) stopOnce() { r.stopped.Do(func() { close(r.stop) }) }

// startRun starts a run for prompt and the goroutine that drains it.
func (m *model) startRun(prompt string) tea.Cmd {
	m.seq++
	ctx, cancel := context.WithCancel(m.ctx)
	r := &runState{
		seq:      m.seq,
		cancel:   cancel,
		events:   make(chan item, 256),
		asks:     make(chan *ask),
		asked:    make(chan *question),
		stop:     make(chan struct{}),
		finished: make(chan struct{}),
		started:  m.now(),
		base:     m.info,
	}
	m.run = r
	appr := &approver{asks: r.asks, questions: r.asked, stop: r.stop, timeout: m.opts.AskTimeout, now: time.Now}
	label := m.typed // what the user typed, for the checkpoint's name
	if label == "" {
		label = prompt
	}
	m.typed = ""
	go r.pump(ctx, m.backend, m.prompt(m.withShellContext(prompt)), label, appr)
	return tea.Batch(r.wait(), m.spin.Tick)
}

// pump drains the backend's stream into r.events, then closes it. Once the
// UI is gone (stop) the stream is still drained, so the run ends properly.
func (r *runState) pump(ctx context.Context, b Backend, prompt Prompt, label string, appr *approver) {
	defer close(r.finished)
	defer close(r.events)
	defer r.cancel()
	cp, _ := b.(Checkpointer)
	if cp != nil {
		if err := cp.BeginPrompt(ctx, label); err != nil {
			select { // the run goes on without a checkpoint; the user is told
			case r.events <- item{err: fmt.Errorf("no checkpoint for this prompt (/rewind cannot restore it): %w", err)}:
			case <-r.stop:
			}
		}
	}
	for ev, err := range b.Submit(ctx, prompt, appr) {
		if cp != nil && err == nil {
			cp.Observe(ev) // before the run goes on: a file is saved before its tool runs
		}
		select {
		case r.events <- item{ev, err}:
		case <-r.stop:
		}
	}
}

// wait returns a command that waits for the run's next events or question.
// Events already queued go first, so a question never overtakes the
// tool_start it is about.
func (r *runState) wait() tea.Cmd {
	return func() tea.Msg {
		if msg := r.drain(nil); msg != nil {
			return msg
		}
		select {
		case it, ok := <-r.events:
			if !ok {
				return runEndedMsg{r.seq}
			}
			return r.drain([]item{it})
		case a := <-r.asks:
			return askMsg{r.seq, a}
		case q := <-r.asked:
			return questionMsg{r.seq, q}
		}
	}
}

// drain adds the events queued now to items; it returns nil when there are
// none, and a runEndedMsg for a closed stream with nothing left.
func (r *runState) drain(items []item) tea.Msg {
	for len(items) < maxBatch {
		select {
		case it, ok := <-r.events:
			if !ok {
				if len(items) == 0 {
					return runEndedMsg{r.seq}
				}
				return eventsMsg{r.seq, items}
			}
			items = append(items, it)
			continue
		default:
		}
		break
	}
	if len(items) == 0 {
		return nil
	}
	return eventsMsg{r.seq, items}
}

// cancelRun cancels the run in progress; its done event still arrives.
func (m *model) cancelRun() {
	r := m.run
	r.cancelled = true
	// Cancel first: whoever waits on a question then sees a cancelled run,
	// not a plain deny it might carry on from.
	r.cancel()
	for _, a := range r.pendingAsks {
		a.answerDeny("interrupted by the user")
	}
	r.pendingAsks = nil
	m.dropQuestions(errors.New("interrupted by the user"))
}

// onEvents shows a batch of the run's events and waits for more.
func (m *model) onEvents(msg eventsMsg) tea.Cmd {
	r := m.run
	if r == nil || r.seq != msg.seq {
		return nil
	}
	for _, it := range msg.items {
		if it.err != nil {
			m.flushText()
			m.printBlock(m.st.bad.Render("✗ " + it.err.Error()))
			continue
		}
		m.handleEvent(it.ev)
	}
	cmds := []tea.Cmd{r.wait()}
	if r.dirty && !r.renderQueued {
		r.renderQueued = true
		seq := r.seq
		cmds = append(cmds, tea.Tick(renderInterval, func(time.Time) tea.Msg { return renderTickMsg{seq} }))
	}
	return tea.Batch(cmds...)
}

// onRunEnded closes the run: what is left goes to the scrollback, the
// session info is refreshed, and a queued line starts.
func (m *model) onRunEnded(msg runEndedMsg) tea.Cmd {
	r := m.run
	if r == nil || r.seq != msg.seq {
		return nil
	}
	m.endThinking()
	m.flushText()
	for _, a := range r.pendingAsks {
		a.answerDeny("the run ended")
	}
	m.dropQuestions(errors.New("the run ended"))
	if r.done == nil {
		if r.cancelled {
			m.printBlock(m.st.warn.Render("stopped: cancelled"))
		}
	}
	m.run = nil
	m.info = m.backend.Info()
	return m.next()
}

// onRenderTick renders the streamed text again when it changed.
func (m *model) onRenderTick(msg renderTickMsg) {
	r := m.run
	if r == nil || r.seq != msg.seq {
		return
	}
	r.renderQueued = false
	m.renderLive()
}

// handleEvent shows one event of the run.
func (m *model) handleEvent(ev agent.Event) {
	r := m.run
	if ev.Subagent != nil {
		m.handleSubagentEvent(ev)
		return
	}
	switch ev.Type {
	case agent.EventTextDelta:
		m.endThinking()
		r.text += ev.Text
		r.streamed, r.anyText, r.dirty = true, true, true
		r.retry = ""
	case agent.EventThinkingDelta:
		r.thinking += ev.Text
		r.retry = ""
	case agent.EventToolStart:
		r.retry = ""
		m.onToolStart(ev.Tool)
	case agent.EventToolEnd:
		m.onToolEnd(ev.Tool)
	case agent.EventPermissionDecision:
		m.onDecision(ev.Permission)
	case agent.EventCompaction:
		m.onCompaction(ev.Compaction)
	case agent.EventRetry:
		m.onRetry(ev.Retry)
	case agent.EventUsage:
		r.retry = ""
		if u := ev.Usage; u != nil {
			r.tokens = u.Run.PromptTokens() + u.Run.OutputTokens
			r.cost = u.CostUSD
			if n := u.Turn.PromptTokens() + u.Turn.OutputTokens; n > 0 {
				m.ctxUsed = n
			}
		}
	case agent.EventError:
		m.onError(ev.Error)
	case agent.EventMessage:
		m.onMessage(ev.Message)
	case agent.EventDone:
		m.onDone(ev.Done)
	}
}

// handleSubagentEvent shows a sub-agent's tool calls and permission
// decisions as the parent's, named after the agent ("explore·grep"); its
// text, usage and messages are its own business: the parent's transcript
// gets its report as the task call's result.
func (m *model) handleSubagentEvent(ev agent.Event) {
	sub := ev.Subagent
	rename := func(t agent.ToolEvent) *agent.ToolEvent {
		t.ID = sub.ParentCallID + "/" + t.ID
		t.Name = sub.Agent + "·" + t.Name
		return &t
	}
	switch {
	case ev.Type == agent.EventToolStart && ev.Tool != nil:
		m.onToolStart(rename(*ev.Tool))
	case ev.Type == agent.EventToolEnd && ev.Tool != nil:
		m.onToolEnd(rename(*ev.Tool))
	case ev.Type == agent.EventPermissionDecision && ev.Permission != nil:
		p := *ev.Permission
		p.Tool = sub.Agent + "·" + p.Tool
		m.onDecision(&p)
	}
}

// onToolStart ends the text before the call and shows the call running.
func (m *model) onToolStart(t *agent.ToolEvent) {
	if t == nil {
		return
	}
	m.endThinking()
	m.flushText()
	m.run.tools = append(m.run.tools, &toolRun{
		id: t.ID, name: t.Name, summary: toolSummary(t.Name, t.Input), input: t.Input, started: m.now(),
	})
}

// onToolEnd prints the call's outcome and an output preview.
func (m *model) onToolEnd(t *agent.ToolEvent) {
	if t == nil {
		return
	}
	r := m.run
	run := &toolRun{summary: toolSummary(t.Name, t.Input), input: t.Input}
	for i, tr := range r.tools {
		if tr.id == t.ID {
			run = tr
			r.tools = append(r.tools[:i], r.tools[i+1:]...)
			break
		}
	}
	m.flushText()
	m.printBlock(m.toolEndView(run, t))
}

// onDecision prints decisions the user did not take in the prompt (hooks,
// timeouts); the user's own answers were echoed when given.
func (m *model) onDecision(p *agent.PermissionEvent) {
	if p == nil || p.By == "user" || p.By == "policy" {
		return
	}
	verb := "allowed"
	if p.Decision != "allow" {
		verb = "denied"
	}
	line := fmt.Sprintf("  ⎿  %s %s by %s", p.Tool, verb, p.By)
	if p.By == "timeout" {
		line = fmt.Sprintf("  ⎿  %s denied: no answer in time", p.Tool)
	}
	m.print(m.st.dim.Render(line))
}

// onCompaction prints a compaction notice.
func (m *model) onCompaction(c *agent.CompactionEvent) {
	if c == nil {
		return
	}
	m.flushText()
	line := fmt.Sprintf("◇ context compacted: %s → %s tokens", fmtTokens(int64(c.TokensBefore)), fmtTokens(int64(c.TokensAfter)))
	var extra []string
	if len(c.Layers) > 0 {
		extra = append(extra, strings.Join(c.Layers, ", "))
	}
	if c.Trigger != "" {
		extra = append(extra, string(c.Trigger))
	}
	if len(extra) > 0 {
		line += " (" + strings.Join(extra, "; ") + ")"
	}
	m.printBlock(m.st.dim.Render(line))
}

// onRetry shows a retry in the live area and the scrollback.
func (m *model) onRetry(rt *agent.RetryEvent) {
	if rt == nil {
		return
	}
	delay := time.Duration(rt.DelayMS) * time.Millisecond
	line := fmt.Sprintf("retrying in %s: %s", fmtDelay(delay), rt.Kind)
	if rt.Attempt > 0 {
		line += fmt.Sprintf(" (attempt %d)", rt.Attempt)
	}
	m.run.retry = line
	m.flushText()
	m.print(m.st.warn.Render("↻ " + line))
}

// onError prints an error of the run.
func (m *model) onError(e *agent.ErrorEvent) {
	if e == nil {
		return
	}
	m.flushText()
	m.run.lastError = e.Message
	line := "✗ error"
	if e.Kind != "" {
		line += " (" + e.Kind + ")"
	}
	m.printBlock(m.st.bad.Render(line + ": " + e.Message))
}

// onMessage ends an assistant message: its text goes to the scrollback. A
// backend that does not stream deltas gets its text shown from here.
func (m *model) onMessage(msg *llm.Message) {
	if msg == nil || msg.Role != llm.RoleAssistant {
		return
	}
	r := m.run
	if !r.streamed {
		if t := messageText(msg); t != "" {
			r.text, r.anyText = t, true
		}
	}
	r.streamed = false
	m.endThinking()
	m.flushText()
}

// onDone ends the run's output; a run that did not complete says why.
func (m *model) onDone(d *agent.DoneEvent) {
	if d == nil {
		return
	}
	r := m.run
	r.done = d
	m.endThinking()
	if !r.anyText && d.Text != "" {
		r.text = d.Text
	}
	m.flushText()
	r.cost = d.CostUSD
	r.tokens = d.Usage.PromptTokens() + d.Usage.OutputTokens
	if line := doneLine(d, r.lastError); line != "" {
		m.printBlock(m.st.warn.Render(line))
	}
}

// doneLine says why a run stopped; empty when it completed.
func doneLine(d *agent.DoneEvent, shownError string) string {
	if d.Reason == agent.ReasonCompleted || d.Reason == "" {
		return ""
	}
	line := "stopped: " + string(d.Reason)
	if d.Error != "" && d.Error != shownError {
		line += ": " + d.Error
	}
	switch d.Reason {
	case agent.ReasonMaxTurns, agent.ReasonMaxTokens, agent.ReasonTimeout:
		line += " — continue with another message"
	case agent.ReasonCancelled:
		line += " — tell rein what to do instead"
	}
	return line
}

// messageText joins the text blocks of msg.
func messageText(msg *llm.Message) string {
	var parts []string
	for _, b := range msg.Content {
		if t, ok := b.(*llm.Text); ok && t.Text != "" {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// endThinking collapses the thinking shown so far to one dim line in the
// scrollback.
func (m *model) endThinking() {
	r := m.run
	if r == nil || strings.TrimSpace(r.thinking) == "" {
		if r != nil {
			r.thinking = ""
		}
		return
	}
	m.printBlock(m.st.dim.Render(oneLine("✻ Thought: "+r.thinking, m.width)))
	r.thinking = ""
}

// flushText moves the streamed text to the scrollback, rendered.
func (m *model) flushText() {
	r := m.run
	if r == nil || strings.TrimSpace(r.text) == "" {
		if r != nil {
			r.text, r.rendered, r.dirty = "", "", false
		}
		return
	}
	m.printBlock(m.md.render(r.text, m.width, m.dark))
	r.text, r.rendered, r.dirty = "", "", false
}

// renderLive renders the streamed text; when it outgrows the room left on
// screen, its finished blocks go to the scrollback.
func (m *model) renderLive() {
	r := m.run
	if !r.dirty {
		return
	}
	r.dirty = false
	r.rendered = m.md.render(r.text, m.width, m.dark)
	if lineCount(r.rendered) <= m.liveRoom() {
		return
	}
	stable, rest := splitStable(r.text)
	if stable == "" {
		return
	}
	m.printBlock(m.md.render(stable, m.width, m.dark))
	r.text = rest
	r.rendered = m.md.render(rest, m.width, m.dark)
}

// toolInputJSON decodes a tool's input object; nil when it is not one.
func toolInputJSON(raw json.RawMessage) map[string]any {
	var in map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &in) != nil {
		return nil
	}
	return in
}
