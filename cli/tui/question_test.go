package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/builtin"
)

// askUserScript is a run whose model calls ask_user with input: the
// built-in tool asks the run's approver (it must be a builtin.Asker, as
// the runner requires to offer the tool) and the tool's result goes on
// results, then ends the call and the run.
func askUserScript(input string, results chan<- tool.Result) func(context.Context, string, permission.Approver, func(agent.Event) bool) {
	return func(ctx context.Context, _ string, ap permission.Approver, emit func(agent.Event) bool) {
		asker, ok := ap.(builtin.Asker)
		if !ok {
			results <- tool.Errorf("the approver %T cannot ask", ap)
			return
		}
		in := json.RawMessage(input)
		emit(agent.Event{Type: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "q1", Name: builtin.AskUserName, Input: in}})
		res, err := builtin.NewAskUser(asker).Run(ctx, tool.Call{ID: "q1", Name: builtin.AskUserName, Input: in})
		if err != nil {
			res = tool.Errorf("run: %v", err)
		}
		results <- res
		emit(agent.Event{Type: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "q1", Name: builtin.AskUserName, Output: res.TextOf(), IsError: res.IsError, Outcome: "ok"}})
		reason := agent.ReasonCompleted
		if ctx.Err() != nil {
			reason = agent.ReasonCancelled
		}
		emit(doneEvent(reason))
	}
}

// result waits for the tool's result.
func (h *harness) result(results <-chan tool.Result) tool.Result {
	h.t.Helper()
	var res tool.Result
	h.until("the ask_user result", func() bool {
		select {
		case res = <-results:
			return true
		default:
			return false
		}
	})
	return res
}

const portQuestion = `{"question":"Which port should the server listen on?","options":["80","8080"]}`

// PERM-3: the question panel — options chosen by digit, arrows or Tab
// and Enter, "Other…" typed in the answer box, Esc declining (and Esc in
// the box going back to the choices) — gives the model the answer, or a
// clear "declined" it goes on from.
func TestQuestionAnswers_PERM3(t *testing.T) {
	keyTab := press(tea.KeyTab, 0)
	for _, tc := range []struct {
		name  string
		input string
		keys  []any // tea.KeyPressMsg, or a string typed key by key
		want  string
		echo  string
	}{
		{"digit", portQuestion, []any{"2"}, "The user answered: 8080", "answered"},
		{"enter on the first", portQuestion, []any{keyEnter}, "The user answered: 80", "answered"},
		{"down enter", portQuestion, []any{keyDown, keyEnter}, "The user answered: 8080", "answered"},
		{"up wraps to Other", portQuestion, []any{keyUp, keyEnter, "3000 for now", keyEnter}, "The user answered: 3000 for now", "answered"},
		{"tab tab to Other", portQuestion, []any{keyTab, keyTab, keyEnter, "443", keyEnter}, "The user answered: 443", "answered"},
		{"Other by its digit", portQuestion, []any{"3", "any free one", keyEnter}, "The user answered: any free one", "answered"},
		{"out of range digit ignored", portQuestion, []any{"7", "1"}, "The user answered: 80", "answered"},
		{"letters do nothing in the list", portQuestion, []any{"xyz", "2"}, "The user answered: 8080", "answered"},
		{"empty answer not sent", portQuestion, []any{"3", keyEnter, "  ", keyEnter, "9090", keyEnter}, "The user answered: 9090", "answered"},
		{"paste opens the box", portQuestion, []any{tea.PasteMsg{Content: "pasted\r\nanswer"}, keyEnter}, "The user answered: pasted\nanswer", "answered"},
		{"esc declines", portQuestion, []any{keyEsc}, "The user declined to answer", "declined"},
		{"esc in the box goes back", portQuestion, []any{"3", "typed", keyEsc, keyUp, keyEnter}, "The user answered: 8080", "answered"},
		{"no options: typed", `{"question":"Name the branch?"}`, []any{"feature/ask", keyEnter}, "The user answered: feature/ask", "answered"},
		{"no options: multi-line", `{"question":"Notes?"}`, []any{"one", keyAltEnter, "two", keyEnter}, "The user answered: one\ntwo", "answered"},
		{"no options: esc declines", `{"question":"Name the branch?"}`, []any{"half", keyEsc}, "The user declined to answer", "declined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := make(chan tool.Result, 1)
			h := newHarness(t, &fakeBackend{script: askUserScript(tc.input, results)})
			h.submit("set up the server")
			h.viewHas("Question from the model", "waiting for your answer", "goes on without an answer in")
			for _, k := range tc.keys {
				switch k := k.(type) {
				case string:
					h.typeText(k)
				case tea.KeyPressMsg:
					h.send(k)
				case tea.PasteMsg:
					h.send(k)
				}
				h.settle()
			}
			res := h.result(results)
			if res.IsError || !strings.HasPrefix(res.TextOf(), tc.want) {
				t.Fatalf("result %q (error %v), want %q", res.TextOf(), res.IsError, tc.want)
			}
			h.idle()
			h.printedHas("✓ ask_user(", "· "+tc.echo)
			h.viewHas("> Type a message")
		})
	}
}

// PERM-3: the panel shows the question, the numbered choices with the
// highlighted one marked and "Other…" last, the keys and the countdown;
// the status line says the run waits for the user; the answer box opens
// under the panel.
func TestQuestionPanel_PERM3(t *testing.T) {
	results := make(chan tool.Result, 1)
	h := newHarness(t, &fakeBackend{script: askUserScript(portQuestion, results)}, func(o *Options) { o.AskTimeout = 5 * time.Minute })
	h.submit("set up the server")
	h.viewHas("Question from the model", "Which port should the server listen on?",
		"› 1. 80", "  2. 8080", "  3. Other… (type an answer)", "↑↓ choose · 1-3 or enter answer · esc decline",
		"● ask_user(Which port should the server listen on?) waiting for your answer", "enter answer · esc decline · ctrl+c interrupt")
	if strings.Contains(h.view(), "Type a message") {
		t.Errorf("the prompt's input box is shown with the question:\n%s", h.view())
	}
	q := h.m.currentQuestion()
	h.setClock(q.deadline.Add(-90 * time.Second))
	h.viewHas("goes on without an answer in 1m30s")
	h.send(keyDown)
	h.viewHas("  1. 80", "› 2. 8080")
	h.send(keyDown)
	h.send(keyEnter)
	h.viewHas("› 3. Other", "Type your answer", "enter send · alt+enter new line · esc back to the choices", "enter send · esc back · ctrl+c interrupt")
	h.typeText("8443")
	h.viewHas("> 8443")
	h.send(keyEnter)
	if res := h.result(results); res.TextOf() != "The user answered: 8443" {
		t.Fatalf("result %q", res.TextOf())
	}
	h.idle()
}

// PERM-3: a question arriving while the user types a prompt keeps the
// draft: it is back in the input box once the question is answered, and
// keys typed for it in the moment the question appeared do not answer.
func TestQuestionKeepsDraft_PERM3(t *testing.T) {
	gate := make(chan struct{})
	results := make(chan tool.Result, 1)
	script := askUserScript(portQuestion, results)
	b := &fakeBackend{script: func(ctx context.Context, p string, ap permission.Approver, emit func(agent.Event) bool) {
		if p == "first" {
			<-gate
			script(ctx, p, ap, emit)
		}
	}}
	h := newHarness(t, b)
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	h.setClock(t0)
	h.submit("first")
	h.viewHas("Working…")
	h.typeText("half a draft 1")
	close(gate)
	h.setClock(t0.Add(100 * time.Millisecond))
	h.viewHas("Question from the model")
	// Still typing the draft: "2" and Enter do not answer yet.
	h.typeText("2")
	h.send(keyEnter)
	h.settle()
	if h.m.currentQuestion() == nil {
		t.Fatal("a key typed as the question appeared answered it")
	}
	h.setClock(t0.Add(100*time.Millisecond + askGuard))
	h.typeText("2")
	if res := h.result(results); res.TextOf() != "The user answered: 8080" {
		t.Fatalf("result %q", res.TextOf())
	}
	h.idle()
	h.viewHas("> half a draft 1")
	h.send(keyEnter)
	h.printedHas("> half a draft 1")
	h.until("the draft to be sent", func() bool { return len(b.gotPrompts()) == 2 })
	if got := b.gotPrompts(); got[1] != "half a draft 1" {
		t.Errorf("prompts %q, want the draft sent second", got)
	}
}

// PERM-3: nobody answers — the question ends at its deadline with the
// model told nobody answered; Ctrl-C interrupts the run and the question.
func TestQuestionExpiryAndInterrupt_PERM3(t *testing.T) {
	t.Run("expiry", func(t *testing.T) {
		results := make(chan tool.Result, 1)
		h := newHarness(t, &fakeBackend{script: askUserScript(portQuestion, results)}, func(o *Options) { o.AskTimeout = 5 * time.Minute })
		h.submit("go")
		h.viewHas("Question from the model")
		h.setClock(h.m.currentQuestion().deadline.Add(time.Second))
		h.send(h.m.spin.Tick())
		res := h.result(results)
		if !strings.Contains(res.TextOf(), "nobody answered the question within 5m0s") {
			t.Fatalf("result %q", res.TextOf())
		}
		h.idle()
	})
	t.Run("ctrl-c", func(t *testing.T) {
		results := make(chan tool.Result, 1)
		h := newHarness(t, &fakeBackend{script: askUserScript(portQuestion, results)})
		h.submit("go")
		h.viewHas("Question from the model")
		h.send(keyCtrlC)
		if res := h.result(results); !res.IsError {
			t.Fatalf("an interrupted question gave %q", res.TextOf())
		}
		h.idle()
		h.printedHas("stopped: cancelled")
		if h.m.quitting {
			t.Fatal("Ctrl-C at a question quit the program")
		}
	})
}

// PERM-3: a permission question and an ask_user question of one run are
// shown one at a time, the permission first.
func TestQuestionAfterPermission_PERM3(t *testing.T) {
	results := make(chan tool.Result, 1)
	verdicts := make(chan permission.Verdict, 1)
	b := &fakeBackend{script: func(ctx context.Context, _ string, ap permission.Approver, emit func(agent.Event) bool) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			v, _ := ap.Approve(ctx, permission.Prompt{Request: permission.Request{Tool: "bash", Input: bashInput}})
			verdicts <- v
		}()
		askUserScript(portQuestion, results)(ctx, "", ap, emit)
		<-done
	}}
	h := newHarness(t, b)
	h.submit("go")
	h.viewHas("Permission required bash")
	h.until("the question to be queued", func() bool { return h.m.run != nil && len(h.m.run.questions) == 1 })
	if strings.Contains(h.view(), "Question from the model") {
		t.Fatalf("both questions shown at once:\n%s", h.view())
	}
	h.typeText("1") // not a permission answer: nothing happens
	h.settle()
	h.typeText("y")
	h.viewHas("Question from the model")
	h.typeText("1")
	if res := h.result(results); res.TextOf() != "The user answered: 80" {
		t.Fatalf("result %q", res.TextOf())
	}
	if v := <-verdicts; v.Answer != permission.AnswerOnce {
		t.Fatalf("verdict %+v", v)
	}
	h.idle()
}

// Attack rows: the question and its options come from the model. Escape
// sequences (title, clear screen, hyperlinks, a C1 CSI), backspaces, CRs
// and bidirectional overrides never reach the terminal; a huge question,
// too many options and endless ones are capped; nothing is wider than the
// view; the answer sent back is the option as the model wrote it.
func TestQuestionHostileInput_PERM3(t *testing.T) {
	long := strings.Repeat("word ", 3000)
	many := make([]string, 20)
	for i := range many {
		many[i] = fmt.Sprintf("option %d", i+1)
	}
	for _, tc := range []struct {
		name     string
		question string
		options  []string
		want     []string // in the view
		key      string
		answer   string
	}{
		{"escape sequences", "Pick\x1b]0;pwned\x07 one\x1b[2J\x1b[H now\u009b31m?\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\",
			[]string{"ok\x1b[31m red\x1b[0m", "back\bspace\rcr"}, []string{"Pick one now", "1. ok red", "2. back�space cr"}, "1", "ok\x1b[31m red\x1b[0m"},
		{"bidi override", "Delete \u202eelif.og\u202c?", []string{"yes \u2066x\u2069"}, []string{"Delete �elif.og�?", "1. yes �x�"}, "1", "yes \u2066x\u2069"},
		{"huge question", long, []string{"a"}, []string{"Question from the model", "… +", "(the whole question is in the scrollback above)", "1. a"}, "1", "a"},
		{"too many options", "Which?", many, []string{"8. option 8", "9. Other…", "(12 more options left out; type an answer to give another)", "1-9 or enter"}, "8", "option 8"},
		{"endless option", "Which?", []string{strings.Repeat("x", 5000), "", "dup", "dup"}, []string{"1. xxxx", "2. dup", "3. Other…"}, "2", "dup"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, _ := json.Marshal(map[string]any{"question": tc.question, "options": tc.options})
			results := make(chan tool.Result, 1)
			h := newHarness(t, &fakeBackend{script: askUserScript(string(in), results)})
			h.submit("go")
			h.viewHas("Question from the model")
			h.viewHas(tc.want...)
			raw := h.m.View().Content
			for _, bad := range []string{"\x1b]", "\x1b[2J", "\x1b[H", "\x07", "\b", "\r", "\u009b", "\u202e", "\u2066", "pwned\x07", "\x1b\\"} {
				if strings.Contains(raw, bad) {
					t.Errorf("the view holds %q:\n%q", bad, raw)
				}
			}
			for _, l := range strings.Split(raw, "\n") {
				if w := ansi.StringWidth(l); w > 100 {
					t.Errorf("a line %d columns wide in a 100-column view: %q", w, ansi.Strip(l))
				}
			}
			if n := lineCount(raw); n > 40 {
				t.Errorf("the view is %d rows high on a 40-row screen", n)
			}
			rows := 0
			for _, l := range strings.Split(h.view(), "\n") {
				if strings.Contains(l, "xxxxxxxxxx") {
					rows++
				}
			}
			if n := rows; n > maxOptionRows {
				t.Errorf("an endless option takes %d rows:\n%s", n, h.view())
			}
			for _, p := range h.raw {
				if strings.Contains(p, "\x1b]") || strings.ContainsAny(p, "\x07\b\r\u202e") {
					t.Errorf("the scrollback got control sequences: %q", p)
				}
			}
			h.typeText(tc.key)
			if res := h.result(results); res.TextOf() != "The user answered: "+strings.TrimSpace(tc.answer) {
				t.Fatalf("result %q, want the option as the model wrote it %q", res.TextOf(), tc.answer)
			}
			h.idle()
		})
	}
}

// The approver's Ask without a UI to take the question: the timeout gives
// builtin.NoAnswerError, a cancelled run its context's error, a UI gone
// a clear error.
func TestApproverAskWithoutUI(t *testing.T) {
	stop := make(chan struct{})
	ap := &approver{questions: make(chan *question), stop: stop, timeout: 10 * time.Millisecond, now: time.Now}
	var none builtin.NoAnswerError
	if _, err := ap.Ask(context.Background(), "q?", nil); !errors.As(err, &none) || none.After != 10*time.Millisecond {
		t.Fatalf("timeout: err %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ap.Ask(ctx, "q?", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err %v", err)
	}
	close(stop)
	ap.timeout = time.Minute
	if _, err := ap.Ask(context.Background(), "q?", nil); !errors.Is(err, errSessionEnded) {
		t.Fatalf("UI gone: err %v", err)
	}
}

// FuzzCleanText: whatever the model writes, the cleaned text holds no
// escape, no control character but newlines, no bidirectional control
// and only valid UTF-8; text without any of them is left as it was.
func FuzzCleanText(f *testing.F) {
	for _, s := range []string{"plain question?", "a\x1b]0;t\x07b", "\x1b[2J\x1b[H", "x\u009b31my", "\u202eabc\u202c", "tab\there\r\nline", "\xff\xfe", "\x1b", "\x1bP1;2|x\x1b\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := cleanText(s)
		if !utf8.ValidString(got) {
			t.Fatalf("cleanText(%q) = %q: not UTF-8", s, got)
		}
		for _, c := range got {
			if c != '\n' && isControl(c) || c == '\t' || c == 0x1b {
				t.Fatalf("cleanText(%q) = %q holds %U", s, got, c)
			}
		}
		if !strings.ContainsFunc(s, func(c rune) bool { return isControl(c) || c == '\t' || c == utf8.RuneError }) && got != s {
			t.Fatalf("cleanText(%q) = %q changed clean text", s, got)
		}
	})
}
