package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reinhq/rein/permission"
)

// ask is a permission question waiting for the user.
type ask struct {
	prompt permission.Prompt
	// ctx ends when the approver stops waiting (timeout, cancelled run).
	ctx      context.Context
	reply    chan permission.Verdict // buffered: answering never blocks
	deadline time.Time
}

// answer sends v unless an answer was already sent.
func (a *ask) answer(v permission.Verdict) {
	select {
	case a.reply <- v:
	default:
	}
}

// answerDeny answers deny with msg for the model.
func (a *ask) answerDeny(msg string) {
	a.answer(permission.Verdict{Answer: permission.AnswerDeny, Message: msg})
}

// approver is the permission.Approver a run gets: it hands each question to
// the UI and blocks the run's goroutine until the user answers, the timeout
// passes (deny) or the run's context ends. It is a builtin.Asker too, for
// the model's ask_user (question.go).
type approver struct {
	asks      chan<- *ask
	questions chan<- *question
	stop      <-chan struct{}
	timeout   time.Duration
	now       func() time.Time
}

// Approve implements permission.Approver.
func (ap *approver) Approve(ctx context.Context, p permission.Prompt) (permission.Verdict, error) {
	timeout := ap.timeout
	if timeout <= 0 {
		timeout = permission.DefaultAskTimeout
	}
	if p.Timeout > 0 && p.Timeout < timeout {
		timeout = p.Timeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	a := &ask{prompt: p, ctx: actx, reply: make(chan permission.Verdict, 1), deadline: ap.now().Add(timeout)}
	select {
	case ap.asks <- a:
	case <-ap.stop:
		return permission.Verdict{Answer: permission.AnswerDeny, Message: "the terminal session ended"}, nil
	case <-actx.Done():
		return ap.expired(ctx, timeout)
	}
	select {
	case v := <-a.reply:
		return v, nil
	case <-ap.stop:
		return permission.Verdict{Answer: permission.AnswerDeny, Message: "the terminal session ended"}, nil
	case <-actx.Done():
		return ap.expired(ctx, timeout)
	}
}

// expired is the verdict when the wait ended without an answer: the run's
// context ended (its error), or the timeout passed (a deny, as permission.Ask
// gives).
func (ap *approver) expired(ctx context.Context, timeout time.Duration) (permission.Verdict, error) {
	if err := ctx.Err(); err != nil {
		return permission.Verdict{Answer: permission.AnswerDeny, Message: "interrupted before an answer"}, err
	}
	return permission.Verdict{
		Answer:   permission.AnswerDeny,
		Message:  fmt.Sprintf("no answer within %s", timeout),
		TimedOut: true,
	}, nil
}

// onAsk shows a question of the run and waits for the run's next message.
func (m *model) onAsk(msg askMsg) tea.Cmd {
	r := m.run
	if r == nil || r.seq != msg.seq {
		msg.ask.answerDeny("the run ended")
		return nil
	}
	m.endThinking()
	m.flushText()
	r.pendingAsks = append(r.pendingAsks, msg.ask)
	return r.wait()
}

// currentAsk is the question shown, or nil.
func (m *model) currentAsk() *ask {
	if m.run == nil || len(m.run.pendingAsks) == 0 {
		return nil
	}
	return m.run.pendingAsks[0]
}

// answerKey answers the shown question: y once, a always, n or Esc deny.
func (m *model) answerKey(k string) tea.Cmd {
	a := m.currentAsk()
	var v permission.Verdict
	var echo string
	plan := isPlanAsk(a)
	switch strings.ToLower(k) {
	case "y", "a", "n", "esc":
		if plan {
			v, echo, _ = planVerdict(k)
			break
		}
		v, echo = m.permissionVerdict(a, k)
	default:
		return nil
	}
	a.answer(v)
	r := m.run
	r.pendingAsks = r.pendingAsks[1:]
	for _, t := range r.tools {
		if t.id != "" && t.id == a.prompt.Request.CallID {
			t.answer = echo
			return nil
		}
	}
	m.print(m.st.dim.Render(fmt.Sprintf("  ⎿  %s %s", a.prompt.Request.Tool, echo)))
	return nil
}

// permissionVerdict is the answer to a tool call by key (y, a, n, Esc).
func (m *model) permissionVerdict(a *ask, k string) (v permission.Verdict, echo string) {
	switch strings.ToLower(k) {
	case "y":
		v, echo = permission.Verdict{Answer: permission.AnswerOnce}, "allowed once"
	case "a":
		v, echo = permission.Verdict{Answer: permission.AnswerAlways}, "allowed always"
		if rules := ruleList(a.prompt.Suggested); rules != "" {
			echo += ": " + rules
		}
	default:
		v, echo = permission.Verdict{Answer: permission.AnswerDeny, Message: "the user denied this call"}, "denied"
	}
	return v, echo
}

// expireAsks drops questions the approver no longer waits for (timed out,
// cancelled), and answers deny to those whose deadline passed.
func (m *model) expireAsks() {
	r := m.run
	if r == nil {
		return
	}
	kept := r.pendingAsks[:0]
	for _, a := range r.pendingAsks {
		if a.ctx.Err() != nil {
			continue
		}
		if !m.now().Before(a.deadline) {
			a.answer(permission.Verdict{
				Answer:   permission.AnswerDeny,
				Message:  "no answer in time",
				TimedOut: true,
			})
			continue
		}
		kept = append(kept, a)
	}
	r.pendingAsks = kept
}

// ruleList formats rules for the user.
func ruleList(rules []permission.Rule) string {
	s := make([]string, len(rules))
	for i, r := range rules {
		s[i] = r.String()
	}
	return strings.Join(s, ", ")
}
