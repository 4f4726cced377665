package tui

import (
	"context"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// exitWindow is how close together two Ctrl-C on an empty prompt must be to
// exit.
const exitWindow = 2 * time.Second

// Messages the model sends itself.
type (
	// printedMsg says the last scrollback print is done; the next may go.
	printedMsg struct{}
	// noticeExpiredMsg clears the transient notice it belongs to.
	noticeExpiredMsg struct{ seq int }
)

// model is the bubbletea model of a session. Its methods run on the UI
// goroutine only; the run's goroutine talks to it through channels (see
// runState and approver).
type model struct {
	ctx     context.Context
	opts    Options
	backend Backend
	info    Info
	st      styles
	noColor bool
	// profile is the terminal's colour profile; scrollback prints are
	// downsampled to it. Nothing is printed before it and the terminal's
	// size are known (hasProfile, hasSize); the header goes first.
	profile    colorprofile.Profile
	hasProfile bool
	hasSize    bool
	headerDone bool
	dark       bool
	width      int
	height     int

	input textarea.Model
	spin  spinner.Model
	md    markdown
	hist  history
	popup popup // the / menu or the @ picker
	// typed is the line the user typed for the run about to start.
	typed string
	// picker is the /resume picker while it is open; rewind the /rewind one.
	picker *sessionPicker
	rewind *rewindPicker
	// indexing is set while the file index refreshes.
	indexing bool
	// shellContext are the ! commands run since the last prompt, with
	// their output: they go to the model with the next prompt.
	shellContext []string
	// ctxUsed and ctxWindow say how full the model's context is.
	ctxUsed, ctxWindow int64

	seq   int       // numbers runs and commands; stale messages are dropped
	run   *runState // the run in progress, or nil
	cmd   *cmdState // the slash command in progress, or nil
	queue []string  // lines sent while busy, taken up when idle
	// images are the image files dropped or pasted into the input box, by
	// the number of their [Image #N] placeholder.
	images   map[int]string
	imageSeq int

	// pending is scrollback text not printed yet; printing is set while a
	// print is on its way, so prints keep their order.
	pending  []string
	printing bool
	printFn  func(string) tea.Cmd
	// tallFrame is the height of the tallest view drawn since the last
	// print began: the renderer may still hold any of them when the next
	// print goes above it, and a print must leave room for it (see
	// flushPrints).
	tallFrame int

	// frameMin is the height the view keeps (see View).
	frameMin int

	notice    string
	noticeSeq int
	lastCtrlC time.Time
	lastEsc   time.Time // the last Esc at the prompt: twice opens /rewind
	lastTyped time.Time // the last key typed or paste into the input box
	now       func() time.Time
	// quitting is set when the user asked to leave: the last prints go
	// out, then exiting is set and the program quits.
	quitting bool
	exiting  bool
}

// newModel returns the model of a session; Run sets printFn.
func newModel(ctx context.Context, opts Options, noColor bool) *model {
	m := &model{
		ctx:     ctx,
		opts:    opts,
		backend: opts.Backend,
		noColor: noColor,
		profile: colorprofile.ANSI256,
		dark:    true,
		width:   80,
		height:  24,
		now:     time.Now,
		st:      newStyles(),
		input:   newInput(),
		md:      markdown{plain: noColor},
		spin:    spinner.New(spinner.WithSpinner(spinner.Dot)),
		hist:    newHistory(opts.History),
		printFn: func(s string) tea.Cmd { return tea.Println(s) },
	}
	if noColor {
		m.profile = colorprofile.ASCII
	}
	m.info = m.backend.Info()
	m.refreshContext()
	m.resize()
	m.printTranscript() // a resumed conversation (--resume, --continue)
	return m
}

// newInput returns the input box: Enter is handled by the model (submit),
// Alt+Enter, Shift+Enter and Ctrl+J insert a newline.
func newInput() textarea.Model {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = ""
	ta.SetPromptFunc(2, func(pi textarea.PromptInfo) string {
		if pi.LineNumber == 0 {
			return "> "
		}
		return "  "
	})
	ta.Placeholder = "Type a message · /help for commands"
	ta.CharLimit = 0
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 8
	ta.MaxContentHeight = 10000
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "shift+enter", "ctrl+j"))
	s := textarea.DefaultDarkStyles()
	s.Focused.CursorLine = s.Focused.Text
	s.Cursor.Blink = false
	ta.SetStyles(s)
	ta.Focus()
	return ta
}

// Init asks the terminal for its background colour (light or dark markdown).
func (m *model) Init() tea.Cmd {
	return tea.RequestBackgroundColor
}

// Update handles one message; scrollback output it queued is printed after.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	m.noteShown()
	return m, tea.Batch(cmd, m.flushPrints())
}

// update dispatches msg.
func (m *model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.ColorProfileMsg:
		if !m.noColor {
			m.profile = msg.Profile
		}
		m.hasProfile = true
	case tea.BackgroundColorMsg:
		m.dark = msg.IsDark()
	case tea.WindowSizeMsg:
		if msg.Width > 0 && msg.Height > 0 {
			m.width, m.height = msg.Width, msg.Height
		}
		m.hasSize = true
		m.frameMin = 0
		m.resize()
		if m.run != nil {
			m.run.dirty = true
			m.renderLive()
		}
	case tea.KeyPressMsg:
		return m.onKey(msg)
	case tea.PasteMsg:
		if m.currentAsk() != nil {
			return nil
		}
		// Pasted text is kept as is, newlines included; CR LF and CR
		// (what many terminals send) become one newline.
		msg.Content = strings.ReplaceAll(strings.ReplaceAll(msg.Content, "\r\n", "\n"), "\r", "\n")
		if q := m.currentQuestion(); q != nil {
			return m.pasteAnswer(q, msg)
		}
		// A dropped or pasted image file becomes an attachment, shown
		// as its placeholder (SPEC LOOP-2).
		if p := pastedImage(msg.Content, m.info.WorkDir); p != "" {
			msg.Content = m.attachImage(p)
		}
		m.lastTyped = m.now()
		return m.updateInput(msg)
	case printedMsg:
		// The print just went above the view and left the terminal's
		// cursor at the view's top: the one moment the view may shrink.
		m.printing = false
		m.frameMin = 0
	case noticeExpiredMsg:
		if msg.seq == m.noticeSeq {
			m.notice = ""
		}
	case spinner.TickMsg:
		return m.onTick(msg)
	case renderTickMsg:
		m.onRenderTick(msg)
	case eventsMsg:
		return m.onEvents(msg)
	case askMsg:
		return m.onAsk(msg)
	case questionMsg:
		return m.onQuestion(msg)
	case runEndedMsg:
		return m.onRunEnded(msg)
	case cmdResultMsg:
		return m.onCommandResult(msg)
	case shellResultMsg:
		return m.onShellResult(msg)
	case filesIndexedMsg:
		return m.onFilesIndexed(msg)
	case sessionsMsg:
		m.onSessions(msg)
	case previewMsg:
		m.onPreview(msg)
	case pointsMsg:
		m.onPoints(msg)
	default:
		return m.updateInput(msg)
	}
	return nil
}

// busy reports whether a run or a slash command is in progress.
func (m *model) busy() bool { return m.run != nil || m.cmd != nil }

// onTick advances the spinner while something runs and expires permission
// questions nobody answered; idle, the spinner's tick chain stops.
func (m *model) onTick(msg spinner.TickMsg) tea.Cmd {
	if !m.busy() {
		return nil
	}
	m.expireAsks()
	if m.run != nil {
		m.expireQuestions()
	}
	var cmd tea.Cmd
	m.spin, cmd = m.spin.Update(msg)
	return cmd
}

// onKey handles a key press.
func (m *model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	k := msg.String()
	switch {
	case k == "ctrl+c":
		return m.ctrlC()
	case k == "ctrl+d" && m.input.Value() == "" && m.currentQuestion() == nil:
		m.quit()
		return nil
	}
	if m.currentAsk() != nil {
		return m.answerKey(k)
	}
	if q := m.currentQuestion(); q != nil {
		return m.questionKey(q, msg)
	}
	if m.picker != nil {
		return m.pickerKey(msg)
	}
	if m.rewind != nil {
		return m.rewindKey(k)
	}
	if handled, submit := m.popupKey(k); handled {
		if submit {
			return m.submit()
		}
		return nil
	}
	switch k {
	case "esc":
		if m.busy() {
			m.interrupt()
			return nil
		}
		// Esc twice in a row at an empty prompt opens /rewind.
		now := m.now()
		if m.input.Value() == "" && !m.lastEsc.IsZero() && now.Sub(m.lastEsc) < exitWindow {
			m.lastEsc = time.Time{}
			if cp, ok := m.backend.(Checkpointer); ok {
				return m.openRewind(cp)
			}
			return nil
		}
		m.lastEsc = now
		return nil
	case "enter":
		return m.submit()
	case "ctrl+z":
		return tea.Suspend
	case "shift+tab": // the mode cycle (CLI-6, PERM-7)
		if !m.busy() {
			return m.backendCommand("permission-mode", "next")
		}
		return m.setNotice("The mode changes between runs: press Shift+Tab again once this one ends")
	case "up", "ctrl+p":
		if m.input.Line() == 0 && m.input.LineInfo().RowOffset == 0 {
			if s, ok := m.hist.prev(m.input.Value()); ok {
				m.recall(s)
			}
			return nil
		}
	case "down", "ctrl+n":
		if li := m.input.LineInfo(); m.input.Line() >= m.input.LineCount()-1 && li.RowOffset >= li.Height-1 {
			if s, ok := m.hist.next(); ok {
				m.recall(s)
			}
			return nil
		}
	}
	if msg.Text != "" {
		m.notice = ""
		m.lastTyped = m.now()
	}
	return m.updateInput(msg)
}

// updateInput passes msg to the input box, then updates the popup; the
// @ picker opening refreshes the file index.
func (m *model) updateInput(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	was := m.popup.kind
	m.refreshPopup()
	if m.popup.kind == '@' && was != '@' {
		return tea.Batch(cmd, m.refreshFiles())
	}
	return cmd
}

// recall puts a line of the history in the input box; the popup stays
// closed on it, so the arrows go on walking the history.
func (m *model) recall(s string) {
	m.input.SetValue(s)
	m.refreshPopup()
	if m.popup.open() {
		m.popup.dismissed = m.popup.token
		m.refreshPopup()
	}
}

// ctrlC cancels what runs; idle, it clears the input, or exits when pressed
// twice within exitWindow on an empty prompt.
func (m *model) ctrlC() tea.Cmd {
	if m.picker != nil || m.rewind != nil {
		m.picker, m.rewind = nil, nil
		return nil
	}
	if m.busy() {
		m.interrupt()
		return nil
	}
	if m.input.Value() != "" {
		m.input.Reset()
		m.hist.reset()
		m.lastCtrlC = time.Time{}
		return nil
	}
	now := m.now()
	if !m.lastCtrlC.IsZero() && now.Sub(m.lastCtrlC) < exitWindow {
		m.quit()
		return nil
	}
	m.lastCtrlC = now
	return m.setNotice("Press Ctrl-C again to exit")
}

// interrupt cancels the run or command in progress; lines queued behind it
// go back to the input box rather than start.
func (m *model) interrupt() {
	if m.run != nil {
		m.cancelRun()
	}
	if m.cmd != nil {
		m.cmd.cancel()
	}
	if len(m.queue) > 0 {
		text := strings.Join(m.queue, "\n")
		if cur := m.input.Value(); cur != "" {
			text += "\n" + cur
		}
		m.input.SetValue(text)
		m.queue = nil
	}
}

// setNotice shows a transient notice under the live area for exitWindow.
func (m *model) setNotice(s string) tea.Cmd {
	m.notice = s
	m.noticeSeq++
	seq := m.noticeSeq
	return tea.Tick(exitWindow, func(time.Time) tea.Msg { return noticeExpiredMsg{seq} })
}

// submit sends the input box's text: now when idle, after the run or
// command in progress otherwise.
func (m *model) submit() tea.Cmd {
	text := m.input.Value()
	if strings.TrimSpace(text) == "" {
		return nil
	}
	m.input.Reset()
	m.refreshPopup()
	m.hist.add(text)
	m.notice = ""
	m.lastCtrlC = time.Time{}
	m.lastTyped = time.Time{} // sent: nothing is being typed
	if m.opts.OnSubmit != nil {
		m.opts.OnSubmit(text)
	}
	if m.busy() {
		m.queue = append(m.queue, text)
		return nil
	}
	return m.execLine(text)
}

// execLine runs a submitted line: a slash command or a prompt.
func (m *model) execLine(text string) tea.Cmd {
	if command, ok := shellCommand(text); ok {
		return m.runShell(command)
	}
	if name, args, ok := parseCommand(text); ok && !m.isCustom(text) {
		return m.command(name, args)
	}
	prompt, err := m.expandRanges(text)
	if err != nil {
		// Nothing is sent: the line goes back to the input box to be fixed.
		m.input.SetValue(text)
		m.input.CursorEnd()
		m.refreshPopup()
		m.print(m.st.bad.Render("✗ " + err.Error()))
		return nil
	}
	m.printBlock(m.userEcho(text))
	m.typed = text
	return m.startRun(prompt)
}

// next takes up the first queued line, if any, once idle.
func (m *model) next() tea.Cmd {
	if m.busy() || len(m.queue) == 0 {
		return nil
	}
	line := m.queue[0]
	m.queue = m.queue[1:]
	return m.execLine(line)
}

// resize fits the input box and the markdown to the terminal's width.
func (m *model) resize() {
	m.input.SetWidth(max(10, m.width-2))
	if m.run != nil {
		for _, q := range m.run.questions {
			q.input.SetWidth(max(10, m.width-2))
		}
	}
}

// print queues s for the scrollback.
func (m *model) print(s string) {
	m.pending = append(m.pending, s)
}

// printBlock queues s for the scrollback after an empty line.
func (m *model) printBlock(s string) {
	m.pending = append(m.pending, "\n"+s)
}

// flushPrints prints the queued scrollback text, one print at a time so the
// order holds; when quitting, it quits once all is printed.
func (m *model) flushPrints() tea.Cmd {
	ready := m.hasProfile && m.hasSize
	if m.quitting && (!ready || (!m.printing && len(m.pending) == 0)) {
		m.exiting = true
		return tea.Quit
	}
	if ready && !m.headerDone {
		m.headerDone = true
		m.pending = append([]string{m.header()}, m.pending...)
	}
	if !ready || m.printing || len(m.pending) == 0 {
		return nil
	}
	s := strings.Join(m.pending, "\n")
	m.pending = nil
	// A print taller than the room above the view would leave stale
	// lines in the view and lose some of its own (bubbletea's inline
	// renderer scrolls by the print's height plus the view's, then moves
	// up past the screen's top): it goes in pieces that fit, the rest
	// waiting its turn.
	if head, rest, split := splitRows(s, m.width, m.height-m.tallFrame-1); split {
		s, m.pending = head, []string{rest}
	}
	m.tallFrame = 0
	m.printing = true
	return m.printFn(m.paint(s))
}

// quit leaves the session: a last line is printed, then the program ends
// (see flushPrints). Printing it is what lets the view go without a trace:
// right after a print the terminal's cursor is at the view's top.
func (m *model) quit() {
	if m.quitting {
		return
	}
	m.quitting = true
	m.notice = ""
	m.print(m.st.dim.Render("✻ bye"))
}

// paint downsamples s to the terminal's colour profile: scrollback prints
// bypass the renderer that does so for the view.
func (m *model) paint(s string) string {
	if m.profile >= colorprofile.TrueColor {
		return s
	}
	var b strings.Builder
	w := &colorprofile.Writer{Forward: &b, Profile: m.profile}
	if _, err := w.WriteString(s); err != nil {
		return s
	}
	return b.String()
}

// shutdown cancels what is still running once the UI has ended, and waits
// at most grace for the run to finish, so its last events reach the
// backend's store.
func (m *model) shutdown(grace time.Duration) {
	if m.cmd != nil {
		m.cmd.cancel()
	}
	if r := m.run; r != nil {
		r.stopOnce()
		r.cancel()
		select {
		case <-r.finished:
		case <-time.After(grace):
		}
	}
}
