package tui

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/reinhq/rein/internal/suggest"
)

// slashCommand is a command of the help list.
type slashCommand struct {
	name, args, help string
	// local commands are handled by the TUI, not the backend; panel
	// commands by a backend that is a [PanelSource].
	local, panel bool
}

// commands lists the slash commands, in help order.
var commands = []slashCommand{
	{name: "help", help: "list the commands and keys", local: true},
	{name: "compact", help: "summarize the conversation to free context"},
	{name: "clear", help: "start a new conversation"},
	{name: "model", args: "[name]", help: "show or switch the model"},
	{name: "resume", args: "[id]", help: "resume a session (list them without an id)"},
	{name: "sessions", help: "list recent sessions"},
	{name: "cost", help: "show tokens and cost of this session"},
	{name: "jobs", args: "[kill ID]", help: "list this session's background jobs; stop one"},
	{name: "memory", args: "[add|rm TEXT]", help: "show AGENTS.md and memory in the prompt; add or remove a note"},
	{name: "permission-mode", args: "[name]", help: "show or switch the permission mode (Shift+Tab cycles default → accept-edits → plan)"},
	{name: "plan", args: "[prompt]", help: "switch to plan mode: read, plan, and present the plan for approval; a prompt is sent next"},
	{name: "rewind", help: "put the code, the conversation or both back as they were before a prompt"},
	{name: "permissions", args: "[allow|ask|deny RULE]", help: "show the permission mode and rules; add a rule (kept like an \"always\" answer)", panel: true},
	{name: "agents", help: "list the agents the task tool can start (rein agents list)", panel: true},
	{name: "mcp", help: "list the MCP servers and their state (rein mcp list)", panel: true},
	{name: "doctor", help: "check that rein is ready here: configuration, model, tools, MCP servers (rein doctor)", panel: true},
	{name: "init", args: "[chat]", help: "set up this workspace: AGENTS.md, .rein/settings.yaml, an agent (never overwrites)", panel: true},
	{name: "sandbox", help: "show the sandbox policy of commands: profile, writable, network, protected"},
	{name: "exit", help: "leave rein (also /quit, Ctrl-D)", local: true},
}

// aliases map other names to commands.
var aliases = map[string]string{"quit": "exit", "q": "exit", "?": "help", "new": "clear"}

// commandLine matches a slash command: /name, then arguments.
var commandLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/([A-Za-z?][\w-]*)(?:\s+([\s\S]*))?$`) })

// parseCommand splits a slash command line into its name and arguments. A
// line like "/etc/hosts is wrong" is not a command.
func parseCommand(line string) (name, args string, ok bool) {
	sm := commandLine().FindStringSubmatch(strings.TrimSpace(line))
	if sm == nil {
		return "", "", false
	}
	name = strings.ToLower(sm[1])
	if a, ok := aliases[name]; ok {
		name = a
	}
	return name, strings.TrimSpace(sm[2]), true
}

// cmdState is the backend command in progress.
type cmdState struct {
	seq    int
	name   string
	cancel context.CancelFunc
}

// cmdResultMsg carries what a backend command returned.
type cmdResultMsg struct {
	seq  int
	name string
	out  string
	err  error
}

// command runs a slash command: /help and /exit here, the known others in
// the backend, the unknown ones get a hint.
func (m *model) command(name, args string) tea.Cmd {
	m.printBlock(m.userEcho("/" + strings.TrimSpace(name+" "+args)))
	switch name {
	case "help":
		m.print(m.md.render(helpText(m.menuEntries()), m.width, m.dark))
		return nil
	case "exit":
		m.quit()
		return nil
	}
	if isPanel(name) {
		ps, ok := m.backend.(PanelSource)
		if !ok {
			m.print(m.st.warn.Render(fmt.Sprintf("/%s is not available in this session.", name)))
			return nil
		}
		return m.runCommand(name, func(ctx context.Context) (string, error) { return ps.Panel(ctx, name, args) })
	}
	if !knownCommand(name) {
		if e, ok := m.menuEntry(name); ok && e.Kind != KindCommand {
			return m.runEntry(e, args)
		}
		msg := fmt.Sprintf("Unknown command /%s.", name)
		if s := suggestCommand(name); s != "" {
			msg += fmt.Sprintf(" Did you mean /%s?", s)
		}
		m.print(m.st.warn.Render(msg + " Type /help for the list."))
		return nil
	}
	if sp, ok := m.backend.(SessionPicker); ok && name == "resume" && args == "" {
		return m.openPicker(sp)
	}
	if name == "rewind" {
		cp, ok := m.backend.(Checkpointer)
		if !ok {
			m.print(m.st.warn.Render("This session keeps no checkpoints."))
			return nil
		}
		return m.openRewind(cp)
	}
	if name == "plan" && args != "" {
		m.queue = append([]string{args}, m.queue...) // sent once plan mode is on (PERM-7)
		args = ""
	}
	return m.backendCommand(name, args)
}

// PanelSource is a [Backend] that runs the panel commands of the list
// (/permissions, /agents, /mcp, /doctor, /init) besides Command's.
type PanelSource interface {
	Panel(ctx context.Context, name, args string) (string, error)
}

// isPanel reports whether name is a panel command.
func isPanel(name string) bool {
	for _, c := range commands {
		if c.name == name {
			return c.panel
		}
	}
	return false
}

// backendCommand runs a command of the backend; its result is printed
// when it comes.
func (m *model) backendCommand(name, args string) tea.Cmd {
	b := m.backend
	return m.runCommand(name, func(ctx context.Context) (string, error) { return b.Command(ctx, name, args) })
}

// runCommand runs do on a goroutine as command name; its result is
// printed when it comes.
func (m *model) runCommand(name string, do func(ctx context.Context) (string, error)) tea.Cmd {
	m.seq++
	ctx, cancel := context.WithCancel(m.ctx)
	m.cmd = &cmdState{seq: m.seq, name: name, cancel: cancel}
	seq := m.seq
	run := func() tea.Msg {
		out, err := do(ctx)
		return cmdResultMsg{seq: seq, name: name, out: out, err: err}
	}
	return tea.Batch(run, m.spin.Tick)
}

// runEntry runs a skill or a custom command of the / menu: a skill asks
// the model to use it; a custom command is sent as the prompt "/NAME
// ARGS", which the backend expands.
func (m *model) runEntry(e MenuEntry, args string) tea.Cmd {
	switch e.Kind {
	case KindSkill:
		prompt := fmt.Sprintf("Use the %s skill (load it with the skill tool) for this task.", e.Name)
		if args != "" {
			prompt += "\n\n" + args
		}
		return m.startRun(prompt)
	case KindCustom:
		return m.startRun(strings.TrimSpace("/" + e.Name + " " + args)) // the backend expands it
	}
	return nil
}

// onCommandResult shows a backend command's result.
func (m *model) onCommandResult(msg cmdResultMsg) tea.Cmd {
	if m.cmd == nil || m.cmd.seq != msg.seq {
		return nil
	}
	m.cmd.cancel()
	m.cmd = nil
	switch {
	case msg.err != nil:
		m.print(m.st.bad.Render(fmt.Sprintf("✗ /%s: %v", msg.name, msg.err)))
	case strings.TrimSpace(msg.out) != "":
		m.print(m.md.render(msg.out, m.width, m.dark))
	}
	prev := m.info.SessionID
	m.info = m.backend.Info()
	m.refreshContext()
	if msg.err == nil && (msg.name == "resume" || msg.name == "rewind") && m.info.SessionID != "" && m.info.SessionID != prev {
		m.printTranscript()
	}
	return m.next()
}

// knownCommand reports whether name is a command of the list.
func knownCommand(name string) bool {
	for _, c := range commands {
		if c.name == name {
			return true
		}
	}
	return false
}

// suggestCommand returns the command name meant by a mistyped one: the one
// it prefixes, or the closest by edit distance; empty when none is close.
func suggestCommand(name string) string {
	best, bestD := "", 3
	for _, c := range commands {
		if c.name == name {
			continue
		}
		if strings.HasPrefix(c.name, name) {
			return c.name
		}
		if d := suggest.Distance(name, c.name); d < bestD {
			best, bestD = c.name, d
		}
	}
	return best
}

// helpText is the /help output, in markdown: the commands of the / menu.
func helpText(entries []MenuEntry) string {
	var b strings.Builder
	b.WriteString("**Commands**\n\n")
	for _, c := range entries {
		usage := "/" + c.Name
		if c.Args != "" {
			usage += " " + c.Args
		}
		kind := ""
		if c.Kind == KindSkill || c.Kind == KindCustom {
			kind = " (" + string(c.Kind) + ")"
		}
		fmt.Fprintf(&b, "- `%s` — %s%s\n", usage, c.Description, kind)
	}
	b.WriteString("\n**Keys**\n\n")
	b.WriteString("- `Enter` send · `Alt+Enter` / `Ctrl+J` new line · `↑` `↓` history\n")
	b.WriteString("- `Ctrl+C` interrupt the run; at the prompt clear it, twice to exit · `Ctrl+D` exit\n")
	b.WriteString("- `Shift+Tab` cycle the permission mode: default → accept-edits → plan · `Esc` `Esc` rewind (/rewind)\n")
	b.WriteString("- `/` commands · `@` files (`@path#20-45` quotes those lines) · `!` runs a shell command\n")
	b.WriteString("- permission questions: `y` allow once · `a` always · `n` deny; a plan: `y` approve into default · `a` into accept-edits · `n` keep planning\n")
	return b.String()
}
