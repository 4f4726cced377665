package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool/builtin"
)

// The model's ask_user questions (SPEC PERM-3's channel, for questions):
// the run's approver is a builtin.Asker, so the tool is offered and asks
// here, locally and for a run on a server (cli/remote.go answers the
// server's question event through the same Ask). The question and its
// options come from the model and are hostile: they are cleaned of
// control sequences, capped, and wrapped to the view.

// Limits on a question from the model.
const (
	// maxQuestionRunes caps the question's text.
	maxQuestionRunes = 4000
	// maxOptions is how many options are offered: digits 1–8 choose them,
	// 9 is "Other…".
	maxOptions = 8
	// maxOptionRunes caps an option's label.
	maxOptionRunes = 300
	// maxOptionRows caps the rows an option's label wraps onto.
	maxOptionRows = 3
	// maxAnswerRunes caps a typed answer: what the server's API takes
	// (api.QuestionAnswer).
	maxAnswerRunes = 8000
)

// askGuard is how long answering keys (Enter, digits) do nothing after a
// question appears while the user was typing: keys meant for the prompt
// being typed do not answer a question they have not read.
const askGuard = 500 * time.Millisecond

// errSessionEnded is Ask's error when the terminal UI is gone.
var errSessionEnded = errors.New("the terminal session ended")

// question is an ask_user question waiting for the user.
type question struct {
	// ctx ends when the approver stops waiting (timeout, cancelled run).
	ctx      context.Context
	reply    chan questionReply // buffered: answering never blocks
	deadline time.Time
	timeout  time.Duration // how long it waits in all

	text    string   // cleaned and capped, for the screen
	options []string // as the model wrote them: what an answer sends back
	labels  []string // the options cleaned and capped, for the screen
	dropped int      // options left out (over maxOptions)
	// printed says the question was too tall for the panel and is in the
	// scrollback in full.
	printed bool

	cursor int  // the highlighted choice; len(options) is "Other…"
	typing bool // the answer box is open
	input  textarea.Model
	// shown is when the question was first on screen; answering keys do
	// nothing before guard.
	shown, guard time.Time
}

// questionReply is the user's answer, or why there is none.
type questionReply struct {
	answer string
	err    error
}

// newQuestion returns the question of text with options, cleaned.
func newQuestion(ctx context.Context, text string, options []string, now time.Time, timeout time.Duration) *question {
	q := &question{ctx: ctx, reply: make(chan questionReply, 1), deadline: now.Add(timeout), timeout: timeout,
		text: clipRunes(cleanText(text), maxQuestionRunes)}
	for _, o := range options {
		label := oneLine(clipRunes(o, 4*maxOptionRunes), 0)
		if label == "" || slices.Contains(q.options, o) {
			continue
		}
		if len(q.options) == maxOptions {
			q.dropped++
			continue
		}
		q.options = append(q.options, o)
		q.labels = append(q.labels, clipRunes(label, maxOptionRunes))
	}
	q.input = newInput()
	q.input.Placeholder = "Type your answer"
	q.input.CharLimit = maxAnswerRunes
	q.input.MaxHeight = 6
	q.typing = len(q.options) == 0
	return q
}

// send answers the question unless it was answered already.
func (q *question) send(r questionReply) {
	select {
	case q.reply <- r:
	default:
	}
}

// guarded reports whether answering keys still do nothing at now.
func (q *question) guarded(now time.Time) bool { return now.Before(q.guard) }

// Ask implements builtin.Asker: it hands the question to the UI and blocks
// the run's goroutine until the user answers, declines
// (builtin.ErrDeclined), the timeout passes (builtin.NoAnswerError) or the
// run's context ends.
func (ap *approver) Ask(ctx context.Context, text string, options []string) (string, error) {
	timeout := ap.timeout
	if timeout <= 0 {
		timeout = permission.DefaultAskTimeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	q := newQuestion(actx, text, options, ap.now(), timeout)
	unanswered := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return builtin.NoAnswerError{After: timeout}
	}
	select {
	case ap.questions <- q:
	case <-ap.stop:
		return "", errSessionEnded
	case <-actx.Done():
		return "", unanswered()
	}
	select {
	case r := <-q.reply:
		return r.answer, r.err
	case <-ap.stop:
		return "", errSessionEnded
	case <-actx.Done():
		return "", unanswered()
	}
}

// onQuestion shows a question of the run and waits for the run's next
// message. A question too tall for the panel goes to the scrollback in
// full as well.
func (m *model) onQuestion(msg questionMsg) tea.Cmd {
	r := m.run
	q := msg.q
	if r == nil || r.seq != msg.seq {
		q.send(questionReply{err: errors.New("the run ended")})
		return nil
	}
	m.endThinking()
	m.flushText()
	q.input.SetWidth(max(10, m.width-2))
	if lines := wrapText(q.text, m.questionWidth()); len(lines) > m.questionRoom(q) {
		q.printed = true
		m.printBlock(m.st.warn.Render("Question from the model") + "\n" + strings.Join(lines, "\n"))
	}
	r.questions = append(r.questions, q)
	return r.wait()
}

// currentQuestion is the question shown, or nil: permission questions go
// first.
func (m *model) currentQuestion() *question {
	if m.run == nil || len(m.run.questions) == 0 || m.currentAsk() != nil {
		return nil
	}
	return m.run.questions[0]
}

// noteShown marks the question on screen as shown now; when the user was
// typing a moment ago, answering keys wait for askGuard.
func (m *model) noteShown() {
	q := m.currentQuestion()
	if q == nil || !q.shown.IsZero() {
		return
	}
	now := m.now()
	q.shown = now
	if !m.lastTyped.IsZero() && now.Sub(m.lastTyped) < askGuard {
		q.guard = now.Add(askGuard)
	}
}

// questionKey handles a key while a question is shown: ↑↓ (Tab) choose, a
// digit or Enter answers, Esc declines; on "Other…" the answer box opens,
// where Enter sends and Esc goes back to the choices.
func (m *model) questionKey(q *question, msg tea.KeyPressMsg) tea.Cmd {
	k := msg.String()
	if q.typing {
		return m.answerBoxKey(q, msg)
	}
	n := len(q.options) + 1
	switch k {
	case "esc":
		m.settleQuestion(q, questionReply{err: builtin.ErrDeclined})
	case "up", "ctrl+p", "shift+tab", "k":
		q.cursor = (q.cursor + n - 1) % n
	case "down", "ctrl+n", "tab", "j":
		q.cursor = (q.cursor + 1) % n
	case "enter":
		if !q.guarded(m.now()) {
			m.choose(q, q.cursor)
		}
	default:
		if len(k) == 1 && k[0] >= '1' && int(k[0]-'0') <= n && !q.guarded(m.now()) {
			m.choose(q, int(k[0]-'1'))
		}
	}
	return nil
}

// choose answers option i, or opens the answer box for "Other…".
func (m *model) choose(q *question, i int) {
	q.cursor = i
	if i == len(q.options) {
		q.typing = true
		return
	}
	m.settleQuestion(q, questionReply{answer: q.options[i]})
}

// answerBoxKey handles a key in the answer box.
func (m *model) answerBoxKey(q *question, msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		if len(q.options) == 0 {
			m.settleQuestion(q, questionReply{err: builtin.ErrDeclined})
		} else {
			q.typing = false
		}
		return nil
	case "enter":
		if text := strings.TrimSpace(q.input.Value()); text != "" && !q.guarded(m.now()) {
			m.settleQuestion(q, questionReply{answer: text})
		}
		return nil
	}
	var cmd tea.Cmd
	q.input, cmd = q.input.Update(msg)
	return cmd
}

// pasteAnswer puts pasted text in the question's answer box, opening it.
func (m *model) pasteAnswer(q *question, msg tea.PasteMsg) tea.Cmd {
	q.typing, q.cursor = true, len(q.options)
	var cmd tea.Cmd
	q.input, cmd = q.input.Update(msg)
	return cmd
}

// settleQuestion sends the reply and takes the question down; the ask_user
// call's line says how it was answered.
func (m *model) settleQuestion(q *question, rep questionReply) {
	q.send(rep)
	r := m.run
	r.questions = slices.DeleteFunc(r.questions, func(x *question) bool { return x == q })
	echo := "answered"
	if rep.err != nil {
		echo = "declined"
	}
	for _, t := range r.tools {
		if t.answer == "" && (t.name == builtin.AskUserName || strings.HasSuffix(t.name, "·"+builtin.AskUserName)) {
			t.answer = echo
			return
		}
	}
	m.print(m.st.dim.Render("  ⎿  " + builtin.AskUserName + " " + echo))
}

// expireQuestions drops questions the approver no longer waits for, and
// ends those whose deadline passed.
func (m *model) expireQuestions() {
	r := m.run
	now := m.now()
	r.questions = slices.DeleteFunc(r.questions, func(q *question) bool {
		if q.ctx.Err() != nil {
			return true
		}
		if !now.Before(q.deadline) {
			q.send(questionReply{err: builtin.NoAnswerError{After: q.timeout}})
			return true
		}
		return false
	})
}

// dropQuestions ends every pending question with err (the run ended or
// was interrupted).
func (m *model) dropQuestions(err error) {
	for _, q := range m.run.questions {
		q.send(questionReply{err: err})
	}
	m.run.questions = nil
}

// questionWidth is the width of the question panel's text.
func (m *model) questionWidth() int { return max(20, m.width-4) }

// questionRoom is how many rows of the question's text the panel shows:
// the screen less the options, the hints and the answer box.
func (m *model) questionRoom(q *question) int {
	return max(3, m.height-(len(q.labels)+1)*2-14)
}

// questionView is the question panel: the text, the choices with the one
// highlighted, the keys and the time left; with the answer box under it
// when open.
func (m *model) questionView(q *question) string {
	w := m.questionWidth()
	var b strings.Builder
	b.WriteString(m.st.warn.Render("Question") + m.st.dim.Render(" from the model"))
	lines := wrapText(q.text, w)
	if room := m.questionRoom(q); len(lines) > room {
		more := fmt.Sprintf("… +%d lines", len(lines)-room+1)
		if q.printed {
			more += " (the whole question is in the scrollback above)"
		}
		lines = append(lines[:room-1:room-1], m.st.dim.Render(ansi.Truncate(more, w, "…")))
	}
	for _, l := range lines {
		b.WriteString("\n" + l)
	}
	if len(q.options) > 0 {
		b.WriteString("\n")
		for i, label := range append(slices.Clip(q.labels), "Other… (type an answer)") {
			b.WriteString("\n" + m.choiceView(i, label, i == q.cursor, w))
		}
		if q.dropped > 0 {
			b.WriteString("\n" + m.st.dim.Render(fmt.Sprintf("  (%d more options left out; type an answer to give another)", q.dropped)))
		}
	}
	b.WriteString("\n\n" + m.questionHint(q, w))
	panel := m.st.askBox.Width(m.width).Render(b.String())
	if q.typing {
		panel += "\n" + m.st.inputBox.Width(m.width).Render(q.input.View())
	}
	return panel
}

// choiceView is choice i, numbered, wrapped onto at most maxOptionRows
// rows with a hanging indent; the highlighted one is marked.
func (m *model) choiceView(i int, label string, on bool, w int) string {
	mark := "  "
	if on {
		mark = "› "
	}
	num := fmt.Sprintf("%d. ", i+1)
	indent := strings.Repeat(" ", len(mark)+len(num))
	rows := wrapText(label, max(10, w-len(indent)))
	if len(rows) > maxOptionRows {
		rows = rows[:maxOptionRows]
		rows[maxOptionRows-1] = ansi.Truncate(rows[maxOptionRows-1], max(10, w-len(indent))-1, "") + "…"
	}
	for j := range rows {
		if j == 0 {
			rows[j] = mark + num + rows[j]
		} else {
			rows[j] = indent + rows[j]
		}
	}
	s := strings.Join(rows, "\n")
	if on {
		return m.st.accent.Render(s)
	}
	return s
}

// questionHint is the panel's line of keys and the time left.
func (m *model) questionHint(q *question, w int) string {
	var keys string
	switch {
	case q.typing && len(q.options) > 0:
		keys = "enter send · alt+enter new line · esc back to the choices"
	case q.typing:
		keys = "enter send · alt+enter new line · esc decline"
	default:
		keys = fmt.Sprintf("↑↓ choose · 1-%d or enter answer · esc decline", len(q.options)+1)
	}
	left := max(0, q.deadline.Sub(m.now()))
	hint := m.st.bold.Render(keys) + m.st.dim.Render(fmt.Sprintf("  · goes on without an answer in %s", fmtDelay(left.Round(time.Second))))
	return ansi.Truncate(hint, w, "…")
}

// cleanText is text from outside made safe to show: escape sequences
// removed, other control characters (bidirectional ones too) as U+FFFD,
// tabs as spaces, CR LF and CR as LF.
func cleanText(s string) string {
	return strings.ReplaceAll(sanitize(ansi.Strip(s)), "\t", "    ")
}

// clipRunes caps s at n runes, marking the cut with "…".
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// wrapText wraps clean text to width columns, breaking long words.
func wrapText(s string, width int) []string {
	return strings.Split(ansi.Wrap(strings.TrimRight(s, "\n "), width, ""), "\n")
}
