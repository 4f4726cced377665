package tui

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
)

var bashInput = json.RawMessage(`{"command":"go test ./..."}`)

func textDelta(s string) agent.Event { return agent.Event{Type: agent.EventTextDelta, Text: s} }

func doneEvent(reason agent.Reason) agent.Event {
	return agent.Event{Type: agent.EventDone, Done: &agent.DoneEvent{Reason: reason}}
}

func TestHeaderAndStatus(t *testing.T) {
	b := &fakeBackend{info: Info{Model: "claude-x", SessionID: "s42", WorkDir: "/src/app", PermissionMode: "default", Tokens: 12300, CostUSD: 0.05}}
	h := newHarness(t, b)
	h.printedHas("✻ rein", "claude-x", "default mode", "/src/app", "session s42", "/help for commands")
	h.viewHas("> Type a message", "● default mode · claude-x · 12.3k tokens · $0.0500", "/ commands · @ files · ! shell · shift+tab mode")
}

func TestStreamingMarkdownAndTools(t *testing.T) {
	feed := make(chan agent.Event, 16)
	b := &fakeBackend{script: feedScript(feed), info: Info{Model: "m", Tokens: 1000, CostUSD: 0.01}}
	h := newHarness(t, b)
	h.submit("run the tests")
	h.printedHas("> run the tests")
	h.viewHas("Working…", "ctrl+c interrupt")

	feed <- textDelta("# Plan\n\nI will run the ")
	feed <- textDelta("**tests** now.")
	h.viewHas("Plan", "I will run the tests now.")
	if strings.Contains(h.view(), "**tests**") {
		t.Errorf("markdown not rendered:\n%s", h.view())
	}
	if strings.Contains(h.scrollback(), "I will run") {
		t.Errorf("streaming text reached the scrollback before it ended:\n%s", h.scrollback())
	}

	feed <- agent.Event{Type: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "c1", Name: "bash", Input: bashInput}}
	h.viewHas("● bash(go test ./...)")
	h.printedHas("Plan", "I will run the tests now.")
	if strings.Contains(h.view(), "I will run") {
		t.Errorf("finished text still in the live area:\n%s", h.view())
	}

	feed <- agent.Event{Type: agent.EventToolEnd, Tool: &agent.ToolEvent{
		ID: "c1", Name: "bash", Output: "ok  \tpkg/a\t0.1s\nok  \tpkg/b\t0.2s\nok  \tpkg/c\t0.3s\n", DurationMS: 1234, Outcome: "ok",
	}}
	h.printedHas("✓ bash(go test ./...) · 1.2s", "⎿  ok    pkg/a", "ok    pkg/b", "… +1 lines")
	h.until("the tool line to leave the view", func() bool { return !strings.Contains(h.view(), "● bash") })

	feed <- agent.Event{Type: agent.EventUsage, Usage: &agent.UsageEvent{Run: llm.Usage{InputTokens: 1400, OutputTokens: 100}, CostUSD: 0.02}}
	h.viewHas("2.5k tokens", "$0.0300")

	feed <- agent.Event{Type: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "c2", Name: "read_file", Input: json.RawMessage(`{"path":"main.go"}`)}}
	feed <- agent.Event{Type: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "c2", Name: "read_file", IsError: true, Output: "no such file", Outcome: "error", DurationMS: 3}}
	h.printedHas("✗ read_file(main.go) · 0.0s", "⎿  no such file")

	feed <- textDelta("All tests pass.")
	feed <- doneEvent(agent.ReasonCompleted)
	close(feed)
	h.printedHas("All tests pass.")
	h.idle()
	h.viewHas("> Type a message", "/ commands · @ files · ! shell · shift+tab mode")
	if strings.Contains(h.scrollback(), "stopped") {
		t.Errorf("a completed run says it stopped:\n%s", h.scrollback())
	}
}

func TestThinkingRetryCompactionError(t *testing.T) {
	feed := make(chan agent.Event, 16)
	h := newHarness(t, &fakeBackend{script: feedScript(feed)})
	h.submit("hi")
	feed <- agent.Event{Type: agent.EventThinkingDelta, Text: "Let me consider\nthe options."}
	h.viewHas("✻ Thinking: Let me consider the options.", "Thinking…")
	feed <- agent.Event{Type: agent.EventRetry, Retry: &agent.RetryEvent{Attempt: 1, DelayMS: 2000, Kind: "rate_limit", Status: 429}}
	h.viewHas("Retrying in 2s: rate_limit (attempt 1)")
	h.printedHas("↻ retrying in 2s: rate_limit (attempt 1)")
	feed <- textDelta("Answer.")
	h.printedHas("✻ Thought: Let me consider the options.")
	h.until("thinking to leave the view", func() bool { return !strings.Contains(h.view(), "Thinking:") })
	feed <- agent.Event{Type: agent.EventCompaction, Compaction: &agent.CompactionEvent{TokensBefore: 150000, TokensAfter: 32000, Layers: []string{"snip", "summarize"}, Trigger: "budget"}}
	h.printedHas("Answer.", "◇ context compacted: 150.0k → 32.0k tokens (snip, summarize; budget)")
	feed <- agent.Event{Type: agent.EventError, Error: &agent.ErrorEvent{Kind: "auth", Message: "invalid x-api-key", Fatal: true}}
	feed <- agent.Event{Type: agent.EventDone, Done: &agent.DoneEvent{Reason: agent.ReasonError, Error: "invalid x-api-key"}}
	close(feed)
	h.printedHas("✗ error (auth): invalid x-api-key", "stopped: error")
	h.idle()
	if strings.Count(h.scrollback(), "invalid x-api-key") != 1 {
		t.Errorf("the error is shown more than once:\n%s", h.scrollback())
	}
}

func TestDoneReasons(t *testing.T) {
	for _, tc := range []struct {
		done agent.DoneEvent
		want string
	}{
		{agent.DoneEvent{Reason: agent.ReasonMaxTurns}, "stopped: max_turns — continue with another message"},
		{agent.DoneEvent{Reason: agent.ReasonPermissionDenied, Error: "deny rule bash(rm:*)"}, "stopped: permission_denied: deny rule bash(rm:*)"},
		{agent.DoneEvent{Reason: agent.ReasonCompleted, Text: "only in done"}, "only in done"},
	} {
		t.Run(string(tc.done.Reason), func(t *testing.T) {
			d := tc.done
			b := &fakeBackend{script: func(_ context.Context, _ string, _ permission.Approver, emit func(agent.Event) bool) {
				emit(agent.Event{Type: agent.EventDone, Done: &d})
			}}
			h := newHarness(t, b)
			h.submit("go")
			h.idle()
			h.printedHas(tc.want)
		})
	}
}

func TestMessageWithoutDeltas(t *testing.T) {
	b := &fakeBackend{script: func(_ context.Context, _ string, _ permission.Approver, emit func(agent.Event) bool) {
		emit(agent.Event{Type: agent.EventMessage, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.Text{Text: "Not streamed."}}}})
		emit(agent.Event{Type: agent.EventDone, Done: &agent.DoneEvent{Reason: agent.ReasonCompleted, Text: "Not streamed."}})
	}}
	h := newHarness(t, b)
	h.submit("go")
	h.idle()
	h.printedHas("Not streamed.")
	if n := strings.Count(h.scrollback(), "Not streamed."); n != 1 {
		t.Errorf("text shown %d times:\n%s", n, h.scrollback())
	}
}

// askScript starts a bash call, asks, reports the verdict on verdicts and
// ends the call as the verdict says.
func askScript(verdicts chan<- permission.Verdict) func(context.Context, string, permission.Approver, func(agent.Event) bool) {
	return func(ctx context.Context, _ string, ap permission.Approver, emit func(agent.Event) bool) {
		emit(agent.Event{Type: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "c1", Name: "bash", Input: bashInput}})
		req := permission.Request{Tool: "bash", Input: bashInput, CallID: "c1"}
		v, err := ap.Approve(ctx, permission.Prompt{Request: req, Reason: "bash asks in default mode", Suggested: permission.Suggest(req)})
		if err != nil {
			v.Message = "error: " + err.Error()
		}
		verdicts <- v
		end := &agent.ToolEvent{ID: "c1", Name: "bash", Output: "ok", Outcome: "ok", DurationMS: 10}
		if v.Answer == permission.AnswerDeny {
			end = &agent.ToolEvent{ID: "c1", Name: "bash", IsError: true, Output: v.Message, Outcome: "denied"}
		}
		emit(agent.Event{Type: agent.EventToolEnd, Tool: end})
		reason := agent.ReasonCompleted
		if ctx.Err() != nil {
			reason = agent.ReasonCancelled
		}
		emit(doneEvent(reason))
	}
}

func TestPermissionAnswers(t *testing.T) {
	for _, tc := range []struct {
		key    string
		want   permission.Answer
		result string
	}{
		{"y", permission.AnswerOnce, "✓ bash(go test ./...) · allowed once · 0.0s"},
		{"a", permission.AnswerAlways, "✓ bash(go test ./...) · allowed always: bash(go test:*)"},
		{"n", permission.AnswerDeny, "✗ bash(go test ./...) · denied"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			verdicts := make(chan permission.Verdict, 1)
			h := newHarness(t, &fakeBackend{script: askScript(verdicts)})
			h.submit("test it")
			h.viewHas("Permission required bash", "go test ./...", "reason: bash asks in default mode",
				"always would allow: bash(go test:*)", "allow once (y) / always (a) / deny (n)", "denies in",
				"● bash(go test ./...) waiting for permission")
			if strings.Contains(h.view(), "Type a message") {
				t.Errorf("the input box is shown with the question:\n%s", h.view())
			}
			h.typeText("x") // not an answer
			h.settle()
			h.viewHas("allow once (y)")
			h.typeText(tc.key)
			var v permission.Verdict
			h.until("the verdict", func() bool {
				select {
				case v = <-verdicts:
					return true
				default:
					return false
				}
			})
			if v.Answer != tc.want {
				t.Fatalf("answer %q, want %q", v.Answer, tc.want)
			}
			h.idle()
			h.printedHas(tc.result)
			h.viewHas("> Type a message")
		})
	}
}

func TestPermissionCountdownAndExpiry(t *testing.T) {
	verdicts := make(chan permission.Verdict, 1)
	h := newHarness(t, &fakeBackend{script: askScript(verdicts)}, func(o *Options) { o.AskTimeout = 5 * time.Minute })
	h.submit("test it")
	h.viewHas("allow once (y)")
	a := h.m.currentAsk()
	h.setClock(a.deadline.Add(-90 * time.Second))
	h.viewHas("denies in 1m30s")
	h.setClock(a.deadline.Add(time.Second))
	var v permission.Verdict
	h.until("the timed-out verdict", func() bool {
		select {
		case v = <-verdicts:
			return true
		default:
			return false
		}
	})
	if v.Answer != permission.AnswerDeny || !v.TimedOut {
		t.Fatalf("verdict %+v, want a timed-out deny", v)
	}
	h.idle()
}

func TestApproverTimeoutWithoutUI(t *testing.T) {
	ap := &approver{asks: make(chan *ask), stop: make(chan struct{}), timeout: 10 * time.Millisecond, now: time.Now}
	v, err := ap.Approve(context.Background(), permission.Prompt{})
	if err != nil || v.Answer != permission.AnswerDeny || !v.TimedOut {
		t.Fatalf("got %+v, %v; want a timed-out deny", v, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ap.Approve(ctx, permission.Prompt{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err %v", err)
	}
}

func TestCtrlCCancelsRun(t *testing.T) {
	feed := make(chan agent.Event, 16)
	h := newHarness(t, &fakeBackend{script: feedScript(feed)})
	h.submit("long job")
	feed <- textDelta("Working on it")
	h.viewHas("Working on it")
	h.send(keyCtrlC)
	h.idle()
	h.printedHas("Working on it", "stopped: cancelled")
	if h.quit || h.m.quitting {
		t.Fatal("Ctrl-C during a run quit the program")
	}
	h.viewHas("> Type a message")
}

func TestCtrlCWhileAsking(t *testing.T) {
	verdicts := make(chan permission.Verdict, 1)
	h := newHarness(t, &fakeBackend{script: askScript(verdicts)})
	h.submit("test it")
	h.viewHas("allow once (y)")
	h.send(keyCtrlC)
	v := <-verdicts
	if v.Answer != permission.AnswerDeny {
		t.Fatalf("answer %q after Ctrl-C", v.Answer)
	}
	h.idle()
	h.printedHas("stopped: cancelled")
	if h.m.quitting {
		t.Fatal("Ctrl-C while asking quit the program")
	}
}

func TestEscInterrupts(t *testing.T) {
	feed := make(chan agent.Event)
	h := newHarness(t, &fakeBackend{script: feedScript(feed)})
	h.submit("long job")
	h.viewHas("Working…")
	h.send(keyEsc)
	h.idle()
	h.printedHas("stopped: cancelled")
}

func TestCtrlCIdle(t *testing.T) {
	h := newHarness(t, &fakeBackend{})
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	h.setClock(t0)
	h.typeText("draft")
	h.viewHas("> draft")
	h.send(keyCtrlC)
	if v := h.m.input.Value(); v != "" {
		t.Fatalf("Ctrl-C left %q in the input", v)
	}
	h.send(keyCtrlC)
	h.viewHas("Press Ctrl-C again to exit")
	h.setClock(t0.Add(3 * time.Second))
	h.send(keyCtrlC)
	if h.m.quitting {
		t.Fatal("two Ctrl-C 3s apart quit")
	}
	h.setClock(t0.Add(4 * time.Second))
	h.send(keyCtrlC)
	h.until("quit", func() bool { return h.quit })
}

func TestCtrlDExits(t *testing.T) {
	h := newHarness(t, &fakeBackend{})
	h.typeText("ab")
	h.send(keyCtrlD) // not empty: deletes forward, stays
	if h.m.quitting {
		t.Fatal("Ctrl-D with text quit")
	}
	h.send(keyCtrlC)
	h.send(keyCtrlD)
	h.until("quit", func() bool { return h.quit })
}

func TestSlashCommands(t *testing.T) {
	b := &fakeBackend{cmdOut: map[string]string{"model": "Model: **gpt-5**", "cost": "$1.23"}}
	h := newHarness(t, b)
	h.submit("/help")
	h.printedHas("/compact", "/clear", "/model [name]", "/resume [id]", "/cost", "/memory", "/sessions", "/exit", "Alt+Enter")

	b.info.Model = "gpt-5"
	h.submit("/model gpt-5")
	h.idle()
	h.printedHas("> /model gpt-5", "Model: gpt-5")
	h.viewHas(" gpt-5 ")
	h.submit("/COST")
	h.idle()
	h.printedHas("$1.23")
	if got := strings.Join(b.commands, "|"); got != "model gpt-5|cost" {
		t.Errorf("backend commands %q", got)
	}

	h.submit("/modle x")
	h.printedHas("Unknown command /modle. Did you mean /model? Type /help for the list.")
	h.submit("/zzzzzz")
	h.printedHas("Unknown command /zzzzzz. Type /help for the list.")
	if len(b.gotPrompts()) != 0 {
		t.Errorf("slash commands reached Submit: %q", b.gotPrompts())
	}

	h.submit("/etc/hosts looks wrong")
	h.idle()
	if p := b.gotPrompts(); len(p) != 1 || p[0] != "/etc/hosts looks wrong" {
		t.Errorf("a path was taken for a command: %q", p)
	}

	b.cmdErr = errors.New("no such session")
	h.submit("/resume nope")
	h.idle()
	h.printedHas("✗ /resume: no such session")

	h.submit("/exit")
	h.until("quit", func() bool { return h.quit })
}

func TestHistory(t *testing.T) {
	var sent []string
	h := newHarness(t, &fakeBackend{}, func(o *Options) {
		o.History = []string{"first", "second\nline two"}
		o.OnSubmit = func(s string) { sent = append(sent, s) }
	})
	h.typeText("dra")
	h.send(keyUp)
	if v := h.m.input.Value(); v != "second\nline two" {
		t.Fatalf("up: %q", v)
	}
	h.send(keyUp) // moves to the entry's first line
	h.send(keyUp)
	if v := h.m.input.Value(); v != "first" {
		t.Fatalf("up×3: %q", v)
	}
	h.send(keyUp)
	if v := h.m.input.Value(); v != "first" {
		t.Fatalf("past the oldest: %q", v)
	}
	h.send(keyDown)
	h.send(keyDown)
	if v := h.m.input.Value(); v != "dra" {
		t.Fatalf("back to the draft: %q", v)
	}
	h.send(keyEnter)
	h.idle()
	h.send(keyUp)
	if v := h.m.input.Value(); v != "dra" {
		t.Fatalf("the sent line is not in the history: %q", v)
	}
	if len(sent) != 1 || sent[0] != "dra" {
		t.Errorf("OnSubmit got %q", sent)
	}
}

func TestMultilineInput(t *testing.T) {
	b := &fakeBackend{}
	h := newHarness(t, b)
	h.typeText("one")
	h.send(keyAltEnter)
	h.typeText("two")
	h.send(keyCtrlJ)
	h.send(tea.PasteMsg{Content: "pasted a\r\npasted b"})
	if v := h.m.input.Value(); v != "one\ntwo\npasted a\npasted b" {
		t.Fatalf("input %q", v)
	}
	if len(b.gotPrompts()) != 0 {
		t.Fatal("a newline or a paste submitted")
	}
	h.viewHas("> one", "  two", "  pasted a", "  pasted b")
	h.send(keyEnter)
	h.idle()
	if p := b.gotPrompts(); len(p) != 1 || p[0] != "one\ntwo\npasted a\npasted b" {
		t.Fatalf("prompts %q", p)
	}
	h.printedHas("> one\n  two\n  pasted a\n  pasted b")
}

func TestQueueWhileBusy(t *testing.T) {
	feed := make(chan agent.Event, 16)
	b := &fakeBackend{script: feedScript(feed)}
	h := newHarness(t, b)
	h.submit("first")
	h.viewHas("Working…")
	h.submit("second")
	h.viewHas("⏎ queued: second", "enter queues")
	feed <- doneEvent(agent.ReasonCompleted)
	h.until("the second prompt to start", func() bool { return len(b.gotPrompts()) == 2 })
	h.viewHas("Working…")
	h.send(keyCtrlC)
	h.idle()
	if p := b.gotPrompts(); p[1] != "second" {
		t.Fatalf("prompts %q", p)
	}
}

func TestInterruptReturnsQueuedToInput(t *testing.T) {
	feed := make(chan agent.Event)
	h := newHarness(t, &fakeBackend{script: feedScript(feed)})
	h.submit("first")
	h.submit("second")
	h.send(keyCtrlC)
	h.idle()
	if v := h.m.input.Value(); v != "second" {
		t.Fatalf("input %q after interrupt", v)
	}
}

func TestLongAnswerFlushesFinishedBlocks(t *testing.T) {
	feed := make(chan agent.Event, 64)
	h := newHarness(t, &fakeBackend{script: feedScript(feed)})
	h.submit("long")
	for i := range 30 {
		feed <- textDelta("Paragraph " + string(rune('A'+i%26)) + " of the answer.\n\n")
	}
	h.printedHas("Paragraph A of the answer.")
	if n := strings.Count(h.view(), "\n"); n > 40 {
		t.Errorf("view is %d lines high on a 40-line terminal", n)
	}
	feed <- doneEvent(agent.ReasonCompleted)
	h.idle()
	// The run's last blocks reach the scrollback by print commands that
	// may still be on their way when the run is over: wait for the last
	// paragraph (the 30th, D again).
	h.until("the last paragraph printed", func() bool { return strings.Count(h.scrollback(), "Paragraph D of the answer.") == 2 })
	if n := strings.Count(h.scrollback(), "Paragraph A of the answer."); n != 2 {
		// A and the 27th (A again) paragraphs, each once.
		t.Errorf("paragraph A printed %d times:\n%s", n, h.scrollback())
	}
}

func TestBackendStreamError(t *testing.T) {
	b := &fakeBackend{}
	h := newHarness(t, b)
	b.script = nil
	h.m.backend = errBackend{b}
	h.submit("go")
	h.idle()
	h.printedHas("✗ provider unreachable")
}

// errBackend is a backend whose stream fails at once.
type errBackend struct{ *fakeBackend }

// Submit yields one error.
func (errBackend) Submit(context.Context, Prompt, permission.Approver) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) { yield(agent.Event{}, errors.New("provider unreachable")) }
}

func TestNoColor(t *testing.T) {
	b := &fakeBackend{script: func(_ context.Context, _ string, _ permission.Approver, emit func(agent.Event) bool) {
		emit(textDelta("# Title\n\nSome **bold** text."))
		emit(agent.Event{Type: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "c1", Name: "bash", Input: bashInput}})
		emit(agent.Event{Type: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "c1", Name: "bash", Output: "ok", Outcome: "ok"}})
		emit(doneEvent(agent.ReasonMaxTurns))
	}}
	for _, noColor := range []bool{false, true} {
		h := newHarness(t, b, func(o *Options) { o.NoColor = noColor })
		h.submit("go")
		h.idle()
		h.printedHas("Title", "✓ bash", "stopped: max_turns")
		raw := strings.Join(h.raw, "\n")
		hasColor := strings.Contains(raw, "\x1b[38;5;") || strings.Contains(raw, ";38;5;")
		if hasColor == noColor {
			t.Errorf("noColor=%v: colour codes present=%v in %q", noColor, hasColor, raw)
		}
	}
}

func TestQuestionsOneAtATime(t *testing.T) {
	verdicts := make(chan permission.Verdict, 2)
	b := &fakeBackend{script: func(ctx context.Context, _ string, ap permission.Approver, emit func(agent.Event) bool) {
		var wg sync.WaitGroup
		for _, cmd := range []string{"make a", "make b"} {
			in := json.RawMessage(`{"command":"` + cmd + `"}`)
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, _ := ap.Approve(ctx, permission.Prompt{Request: permission.Request{Tool: "bash", Input: in}})
				v.Message = cmd
				verdicts <- v
			}()
		}
		wg.Wait()
		emit(doneEvent(agent.ReasonCompleted))
	}}
	h := newHarness(t, b)
	h.submit("build")
	h.viewHas("allow once (y)")
	first := h.m.currentAsk().prompt.Request.Input
	h.until("both questions", func() bool { return h.m.run != nil && len(h.m.run.pendingAsks) == 2 })
	h.typeText("y")
	h.until("the second question", func() bool {
		a := h.m.currentAsk()
		return a != nil && string(a.prompt.Request.Input) != string(first)
	})
	h.typeText("n")
	got := map[string]permission.Answer{}
	for range 2 {
		v := <-verdicts
		got[v.Message] = v.Answer
	}
	h.idle()
	firstCmd := primaryArg(first)
	for cmd, ans := range got {
		want := permission.AnswerDeny
		if cmd == firstCmd {
			want = permission.AnswerOnce
		}
		if ans != want {
			t.Errorf("%s: answer %q, want %q", cmd, ans, want)
		}
	}
	// No tool_start for these calls: the answers are echoed on their own.
	h.printedHas("⎿  bash allowed once", "⎿  bash denied")
}

func TestResizeRerendersLiveText(t *testing.T) {
	feed := make(chan agent.Event, 4)
	h := newHarness(t, &fakeBackend{script: feedScript(feed)})
	h.submit("go")
	feed <- textDelta(strings.Repeat("word ", 30))
	h.viewHas("word word")
	h.send(tea.WindowSizeMsg{Width: 40, Height: 20})
	for _, l := range strings.Split(h.view(), "\n") {
		if w := ansi.StringWidth(l); w > 40 {
			t.Fatalf("line %q is %d columns on a 40-column terminal", l, w)
		}
	}
	feed <- doneEvent(agent.ReasonCompleted)
	h.idle()
}
