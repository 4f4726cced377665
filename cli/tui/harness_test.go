package tui

import (
	"context"
	"iter"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/permission"
)

// waitLimit bounds every wait of the tests; reaching it fails the test.
const waitLimit = 10 * time.Second

// harness drives a model the way a tea.Program does: messages go through
// Update one at a time on the test's goroutine; commands run on goroutines
// and their messages come back through msgs. Scrollback prints are kept in
// printed, without ANSI codes.
type harness struct {
	t       *testing.T
	m       *model
	msgs    chan tea.Msg
	printed []string
	raw     []string
	quit    bool

	mu    sync.Mutex
	clock time.Time // zero: the real clock
}

// newHarness returns a harness over b, 100×40, with the terminal's colour
// profile known.
func newHarness(t *testing.T, b Backend, opts ...func(*Options)) *harness {
	t.Helper()
	o := Options{Backend: b, AskTimeout: time.Minute}
	for _, f := range opts {
		f(&o)
	}
	h := &harness{t: t, msgs: make(chan tea.Msg, 1024)}
	h.m = newModel(context.Background(), o, o.NoColor)
	h.m.now = h.now
	h.m.printFn = func(s string) tea.Cmd {
		h.raw = append(h.raw, s)
		h.printed = append(h.printed, ansi.Strip(s))
		return func() tea.Msg { return printedMsg{} }
	}
	h.exec(h.m.Init())
	h.send(tea.WindowSizeMsg{Width: 100, Height: 40})
	h.send(tea.ColorProfileMsg{Profile: colorprofile.ANSI256})
	t.Cleanup(func() { h.m.shutdown(time.Second) })
	return h
}

// now is the model's clock.
func (h *harness) now() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.clock.IsZero() {
		return time.Now()
	}
	return h.clock
}

// setClock fixes the model's clock at t.
func (h *harness) setClock(t time.Time) {
	h.mu.Lock()
	h.clock = t
	h.mu.Unlock()
}

// send passes msg to Update and runs the command it returns.
func (h *harness) send(msg tea.Msg) {
	if _, ok := msg.(tea.QuitMsg); ok {
		h.quit = true
		return
	}
	_, cmd := h.m.Update(msg)
	h.exec(cmd)
}

// exec runs cmd on a goroutine and routes its message back: batches run
// concurrently, sequences in order, as tea.Program does.
func (h *harness) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() { h.route(cmd()) }()
}

// route delivers msg, unpacking batches and sequences.
func (h *harness) route(msg tea.Msg) {
	if msg == nil {
		return
	}
	if b, ok := msg.(tea.BatchMsg); ok {
		for _, c := range b {
			h.exec(c)
		}
		return
	}
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeFor[tea.Cmd]() {
		for i := range v.Len() {
			if c := v.Index(i).Interface().(tea.Cmd); c != nil {
				h.route(c())
			}
		}
		return
	}
	h.msgs <- msg
}

// until processes messages until cond holds, failing after waitLimit.
func (h *harness) until(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(waitLimit)
	for !cond() {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s\nview:\n%s\nscrollback:\n%s", what, h.view(), h.scrollback())
		}
	}
}

// settle processes the messages that are ready now.
func (h *harness) settle() {
	for {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		default:
			return
		}
	}
}

// view is the rendered view without ANSI codes.
func (h *harness) view() string { return ansi.Strip(h.m.View().Content) }

// scrollback is everything printed so far.
func (h *harness) scrollback() string { return strings.Join(h.printed, "\n") }

// viewHas waits until the view contains every s.
func (h *harness) viewHas(s ...string) {
	h.t.Helper()
	h.until("view to show "+strings.Join(s, ", "), func() bool { return containsAll(h.view(), s) })
}

// printedHas waits until the scrollback contains every s.
func (h *harness) printedHas(s ...string) {
	h.t.Helper()
	h.until("scrollback to show "+strings.Join(s, ", "), func() bool { return containsAll(h.scrollback(), s) })
}

// idle waits until no run or command is in progress.
func (h *harness) idle() {
	h.t.Helper()
	h.until("the run to end", func() bool { return !h.m.busy() })
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// Keys.
func press(code rune, mod tea.KeyMod) tea.KeyPressMsg { return tea.KeyPressMsg{Code: code, Mod: mod} }

var (
	keyEnter    = press(tea.KeyEnter, 0)
	keyAltEnter = press(tea.KeyEnter, tea.ModAlt)
	keyCtrlJ    = press('j', tea.ModCtrl)
	keyCtrlC    = press('c', tea.ModCtrl)
	keyCtrlD    = press('d', tea.ModCtrl)
	keyUp       = press(tea.KeyUp, 0)
	keyDown     = press(tea.KeyDown, 0)
	keyEsc      = press(tea.KeyEscape, 0)
)

// typeText types s key by key.
func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// submit types s and presses Enter.
func (h *harness) submit(s string) {
	h.typeText(s)
	h.send(keyEnter)
}

// fakeBackend is a scripted Backend: each Submit plays script, which the
// test writes; commands answer from cmdOut.
type fakeBackend struct {
	mu       sync.Mutex
	info     Info
	script   func(ctx context.Context, prompt string, ap permission.Approver, emit func(agent.Event) bool)
	prompts  []string
	images   [][]string
	commands []string
	cmdOut   map[string]string
	cmdErr   error
}

// Submit implements Backend.
func (f *fakeBackend) Submit(ctx context.Context, p Prompt, ap permission.Approver) iter.Seq2[agent.Event, error] {
	prompt := p.Text
	return func(yield func(agent.Event, error) bool) {
		f.mu.Lock()
		f.prompts = append(f.prompts, prompt)
		f.images = append(f.images, p.Images)
		script := f.script
		f.mu.Unlock()
		if script != nil {
			script(ctx, prompt, ap, func(ev agent.Event) bool { return yield(ev, nil) })
		}
	}
}

// Command implements Backend.
func (f *fakeBackend) Command(_ context.Context, name, args string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commands = append(f.commands, strings.TrimSpace(name+" "+args))
	if f.cmdErr != nil {
		return "", f.cmdErr
	}
	return f.cmdOut[name], nil
}

// Info implements Backend.
func (f *fakeBackend) Info() Info {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.info
}

// gotPrompts returns the prompts submitted so far.
func (f *fakeBackend) gotPrompts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.prompts...)
}

// feedScript returns a script that yields the events sent on feed until a
// done event or the feed's end, and a done event when the run is cancelled.
func feedScript(feed <-chan agent.Event) func(context.Context, string, permission.Approver, func(agent.Event) bool) {
	return func(ctx context.Context, _ string, _ permission.Approver, emit func(agent.Event) bool) {
		for {
			select {
			case ev, ok := <-feed:
				if !ok || !emit(ev) || ev.Type == agent.EventDone {
					return
				}
			case <-ctx.Done():
				emit(agent.Event{Type: agent.EventDone, Done: &agent.DoneEvent{Reason: agent.ReasonCancelled}})
				return
			}
		}
	}
}
