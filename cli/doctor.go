package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/tool/mcptool"
	"github.com/reinhq/rein/workspace"
)

// Check statuses, worst last.
const (
	statusOK      = "ok"
	statusWarning = "warning"
	statusBlocked = "blocked"
)

// check is one line of the readiness report: what was checked, how it
// stands, and the next action when it is not ok.
type check struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Next    string `json:"next,omitempty"`
}

// report is rein doctor's result: ready, warning or blocked.
type report struct {
	Status string  `json:"status"`
	Checks []check `json:"checks"`
	// Trust is the workspace's trust state (SPEC PERM-5).
	Trust *trustView `json:"trust,omitempty"`
}

// trustView is the trust state in rein doctor --json: whether the
// workspace is trusted, whether a past trust was lost, and every extra it
// brings with whether it applies.
type trustView struct {
	Workspace string            `json:"workspace"`
	Trusted   bool              `json:"trusted"`
	Lost      bool              `json:"lost,omitempty"`
	Changed   []string          `json:"changed,omitempty"` // what changed since the trust, when lost
	Error     string            `json:"error,omitempty"`
	Extras    []workspace.Extra `json:"extras,omitempty"`
	Ignored   []workspace.Extra `json:"ignored,omitempty"`
}

func (r *report) add(name, status, msg, next string) {
	r.Checks = append(r.Checks, check{Name: name, Status: status, Message: msg, Next: next})
}

// finish sets the overall status.
func (r *report) finish() {
	r.Status = "ready"
	for _, c := range r.Checks {
		switch {
		case c.Status == statusBlocked:
			r.Status = statusBlocked
			return
		case c.Status == statusWarning:
			r.Status = statusWarning
		}
	}
}

func (a *App) doctorCommand() *cobra.Command {
	var asJSON, online bool
	var dir string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that rein is ready to run here: configuration, model and key, tools, MCP servers, sessions",
		Long: `Check that rein is ready to run here. Each problem comes with the next thing
to do. The verdict is ready, warning (rein runs, something is worth fixing) or
blocked (a run would fail); blocked exits with code 1. --online also checks
the key with a cheap call to the provider.

It lists what does not load among the agents, skills, actions, MCP servers and
slash commands (file and line, the workspace's too when it is not trusted), the
custom slash commands that apply and what of them does not (a built-in command
of the same name wins; preludes need a trusted workspace), the names more
than one file defines and which wins, and connects to the MCP servers that
apply, in parallel, each within 10 seconds.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r := a.diagnose(cmd.Context(), a.abs(dir), online)
			if asJSON {
				if err := writeJSON(a.Stdout, r); err != nil {
					return err
				}
			} else {
				printReport(a.Stdout, r)
			}
			if r.Status == statusBlocked {
				return &exitError{code: ExitError}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&online, "online", false, "validate the key with a call to the provider")
	cmd.Flags().StringVar(&dir, "cwd", "", "check this directory instead of the current one")
	return cmd
}

// diagnose runs every check.
func (a *App) diagnose(ctx context.Context, dir string, online bool) report {
	var r report
	l, err := workspace.Load(workspace.Options{WorkDir: dir, Getenv: a.getenv})
	if err != nil {
		r.add("configuration", statusBlocked, err.Error(), "fix the file named above; rein config show prints what rein reads")
		r.finish()
		return r
	}
	r.add("configuration", statusOK, "workspace "+l.Workspace.Root, "")
	for _, w := range l.Warnings {
		if slices.Contains(l.Trust.Warnings, w) {
			continue // checkTrust says it
		}
		if slices.Contains(l.ClaudeUnmapped, w) {
			r.add("claude code settings", statusWarning, w, "rein does not apply this entry as written: rewrite it as said, or write the rule rein's way in .rein/settings.yaml (docs/workspace.md)")
			continue
		}
		if slices.ContainsFunc(l.MCPSkipped, func(s workspace.MCPSkip) bool { return s.Warning() == w }) {
			continue // checkMCP says it
		}
		if slices.Contains(l.Refused, w) {
			r.add("credentials", statusWarning, w, "remove the variable from the workspace's declaration; to pass it, declare the server, hook or action in your user configuration")
			continue
		}
		r.add("configuration", statusWarning, w, "remove the setting from the workspace file, or allow it for this run with the flag or variable named")
	}
	for _, u := range l.Unknown() {
		r.add("configuration", statusWarning, "unknown key "+u+" is ignored", "correct or remove it; rein config show lists the settings")
	}
	checkTrust(&r, l)
	checkHooks(&r, l)
	checkDefinitions(&r, l)
	checkCommands(&r, l) // doctorcmds.go
	checkAgentTools(&r, l)
	checkInstructions(&r, l)
	a.checkMCP(ctx, &r, l)
	a.checkModel(ctx, &r, l, online)
	checkWorkspace(&r, l)
	checkTools(&r, l)
	checkSessions(&r, l)
	r.finish()
	return r
}

// checkTrust reports what the workspace brings that needs trust and
// whether it applies (SPEC PERM-5).
func checkTrust(r *report, l *workspace.Loaded) {
	t := l.Trust
	r.Trust = &trustView{Workspace: l.Workspace.Root, Trusted: t.Trusted, Lost: t.Lost, Changed: t.Changed, Extras: t.Extras, Ignored: t.Ignored()}
	if t.Err != nil {
		r.Trust.Error = t.Err.Error()
	}
	ignored := t.Ignored()
	switch {
	case len(ignored) == 0 && t.Trusted && len(t.Extras) > 0:
		r.add("trust", statusOK, fmt.Sprintf("workspace trusted: %d extra(s) apply", len(t.Extras)), "")
		return
	case len(ignored) == 0:
		r.add("trust", statusOK, "nothing in the workspace needs trust", "")
		return
	}
	next := "review them, then trust the workspace: rein trust " + l.Workspace.Root + " (runs go on without them meanwhile)"
	if t.Err != nil {
		r.add("trust", statusWarning, "workspace trust cannot be checked: "+t.Err.Error(),
			"fix what the error names; until then the workspace cannot be trusted")
	}
	if t.Lost {
		r.add("trust", statusWarning, "trust lost: since you trusted the workspace: "+strings.Join(t.Changed, "; "), next)
	}
	for _, x := range ignored {
		r.add("trust", statusWarning, "not trusted, ignored: "+x.String(), next)
	}
}

// checkHooks counts the hooks that apply; one that does not parse blocks.
func checkHooks(r *report, l *workspace.Loaded) {
	specs, err := l.Hooks()
	if err != nil {
		r.add("hooks", statusBlocked, err.Error(), "fix the hooks file; runs fail until it parses")
		return
	}
	r.add("hooks", statusOK, fmt.Sprintf("%d hook(s) apply", len(specs)), "")
}

// checkDefinitions counts the agents, skills, actions and MCP servers
// that apply and reports what is malformed in their files (with the
// line) and the names more than one file defines — those of an untrusted
// workspace included, so they can be fixed before it is trusted.
func checkDefinitions(r *report, l *workspace.Loaded) {
	d, all := l.Definitions(), l.AllDefinitions()
	r.add("definitions", statusOK, fmt.Sprintf("%d agent(s), %d skill(s), %d action(s), %d MCP server(s) apply",
		len(d.Agents), len(d.Skills), len(d.Actions), len(d.MCP)), "")
	for _, p := range all.Problems {
		if p.Credential {
			continue // a credentials check says it
		}
		r.add("definitions", statusWarning, shortProblem(l, p), "fix the file at that line (docs/workspace.md); the rest loads meanwhile")
	}
	for _, c := range all.Clashes {
		paths := make([]string, len(c.Paths))
		for i, p := range c.Paths {
			paths[i] = displayPath(l, p)
		}
		last, once := paths[len(paths)-1], ""
		if _, ok := under(l.Workspace.Root, c.Paths[len(c.Paths)-1]); ok && !l.Trust.Trusted {
			once = " once the workspace is trusted"
		}
		r.add("definitions", statusOK, fmt.Sprintf("%s %s defined in %s and %s; %s wins%s",
			c.Kind, c.Name, strings.Join(paths[:len(paths)-1], ", "), last, last, once), "")
	}
}

// checkInstructions scans AGENTS.md, the agents and the skills — an
// untrusted workspace's too, so they are reviewed before trusting it —
// for prompt-injection signs (SPEC MEM-3). Each finding is a warning:
// rein still loads what a person wrote.
func checkInstructions(r *report, l *workspace.Loaded) {
	text, name, err := l.Workspace.Instructions()
	if err != nil {
		r.add("instructions", statusWarning, "cannot read the project instructions: "+err.Error(), "fix the file's permissions")
	}
	warnings := runner.ScanInstructions(l.Workspace.Root, text, name, l.AllDefinitions())
	for _, w := range warnings {
		r.add("instructions", statusWarning, w, "read the file; remove what you did not write (docs/security.md, Prompt injection)")
	}
	if len(warnings) == 0 {
		r.add("instructions", statusOK, "no sign of prompt injection in AGENTS.md, agents or skills", "")
	}
}

// doctorMCPTimeout bounds rein doctor's connection to each MCP server.
const doctorMCPTimeout = 10 * time.Second

// checkMCP connects to the MCP servers that apply, in parallel, and
// reports each one's state. A server that fails is a warning: runs go on
// without its tools.
func (a *App) checkMCP(ctx context.Context, r *report, l *workspace.Loaded) {
	for _, s := range l.MCPSkipped {
		r.add("mcp", statusOK, fmt.Sprintf("%s: skipped (%s): %s", s.Name, displayPath(l, s.Path), s.Reason),
			"as Claude Code does; to load it, list it in enabledMcpjsonServers (or set enableAllProjectMcpServers: true) and take it out of disabledMcpjsonServers in .claude/settings.local.json")
	}
	var defs []workspace.MCPServer
	for _, d := range l.Definitions().MCP {
		if d.Disabled {
			r.add("mcp", statusOK, d.Name+": disabled ("+displayPath(l, d.Path)+")", "")
			continue
		}
		defs = append(defs, d)
	}
	if len(defs) == 0 {
		return
	}
	m := a.startMCP(ctx, l, defs, doctorMCPTimeout)
	defer m.Close()
	for i, st := range m.Status() {
		d := defs[i]
		switch st.State {
		case mcptool.StateReady:
			if st.Withheld {
				r.add("mcp", statusWarning, fmt.Sprintf("%s: withheld: its definitions look like a prompt injection: %s", d.Name, st.Screening.Explain(3)),
					fmt.Sprintf("review them (rein mcp test %s), then accept them (rein mcp accept %s) or remove the server (rein mcp remove %s)",
						d.Name, d.Name, d.Name))
				continue
			}
			r.add("mcp", statusOK, fmt.Sprintf("%s: ready, %d tool(s) (%s)", d.Name, st.Tools, st.Transport), "")
		default:
			msg := st.Err
			if msg == "" {
				msg = fmt.Sprintf("no answer within %s", doctorMCPTimeout)
			}
			r.add("mcp", statusWarning, fmt.Sprintf("%s (%s): %s: %s", d.Name, clip(d.Declared, 60), st.State, msg),
				fmt.Sprintf("rein mcp test %s shows more; fix the server, or remove it (rein mcp remove %s) or set disabled: true in %s",
					d.Name, d.Name, displayPath(l, d.Path)))
		}
	}
}

// checkModel resolves the configured model and its key, and with online
// asks the provider whether the key works.
func (a *App) checkModel(ctx context.Context, r *report, l *workspace.Loaded, online bool) {
	v := l.Effective.Get(workspace.Model)
	if v.Value == "" {
		r.add("model", statusBlocked, "no model is configured",
			"export ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY; or rein provider add NAME … and rein provider use NAME\n"+
				"offline, a recorded run: rein run --model replay:examples/quickstart.cassette")
		return
	}
	reg, err := a.registryOf(l)
	if err != nil {
		r.add("model", statusBlocked, err.Error(), "fix the profile in config.yaml (rein provider list)")
		return
	}
	m, err := a.resolveModel(reg, v.Value)
	if err != nil {
		// The error's own hint, on its second line, is the next action: said
		// once, under the problem.
		msg, next, _ := strings.Cut(err.Error(), "\n")
		if next == "" {
			next = "set the key, or pick another model: rein provider list, --model"
		}
		r.add("model", statusBlocked, msg, next)
		return
	}
	from := string(v.Source)
	if v.Origin != "" {
		from += ": " + v.Origin
	}
	r.add("model", statusOK, fmt.Sprintf("%s (%s)", m.Label, from), "")
	if m.Warning != "" {
		r.add("model", statusWarning, m.Warning, "add the model to .rein/models.yaml with its context window and prices")
	}
	for _, p := range reg.Profiles() {
		if p.APIKeyEnv != "" && registry.Auth(p, a.getenv).APIKey != "" && p.Name != strings.SplitN(m.Label, "/", 2)[0] {
			r.add("providers", statusOK, fmt.Sprintf("%s is also available (%s set)", p.Name, p.APIKeyEnv), "")
		}
	}
	if !online {
		return
	}
	av, ok := m.Provider.(llm.AuthValidator)
	if !ok {
		r.add("auth", statusWarning, m.Label+" cannot check its key without a real request", "run a short prompt to check it")
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := av.ValidateAuth(cctx); err != nil {
		r.add("auth", statusBlocked, err.Error(), "check the key and the base URL; rein provider list shows where they come from")
		return
	}
	r.add("auth", statusOK, "the provider accepted the key", "")
}

func checkWorkspace(r *report, l *workspace.Loaded) {
	_, name, err := l.Workspace.Instructions()
	switch {
	case err != nil:
		r.add("instructions", statusWarning, err.Error(), "make AGENTS.md readable")
	case name == "":
		r.add("instructions", statusWarning, "no AGENTS.md (or CLAUDE.md) in "+l.Workspace.Root,
			"rein init writes a template; agents work better knowing how to build and test the project")
	default:
		r.add("instructions", statusOK, filepath.Join(l.Workspace.Root, name)+" goes into the system prompt", "")
	}
}

func checkTools(r *report, l *workspace.Loaded) {
	if _, err := osexec.LookPath("bash"); err != nil {
		r.add("tools", statusWarning, "bash is not installed; commands run with sh", "install bash")
	}
	if _, err := osexec.LookPath("rg"); err != nil {
		r.add("tools", statusWarning, "ripgrep (rg) is not installed; grep uses the slower built-in engine",
			"install ripgrep (apt-get install ripgrep, brew install ripgrep)")
	} else {
		r.add("tools", statusOK, "ripgrep found", "")
	}
	sb := &exec.Sandbox{}
	bw, abi := sb.Available(), exec.LandlockABI()
	switch mode := l.Effective.String(workspace.Sandbox); {
	case mode == "off":
		r.add("sandbox", statusWarning, "sandbox: off: commands run on the host", "set sandbox: workspace")
	case bw == nil && abi > 0:
		r.add("sandbox", statusOK, fmt.Sprintf("sandbox: %s: bubblewrap, with Landlock (ABI %d) inside", mode, abi), "")
	case bw == nil:
		r.add("sandbox", statusOK, fmt.Sprintf("sandbox: %s: bubblewrap (no Landlock in this kernel)", mode), "")
	case mode == "on" || mode == "read-only":
		r.add("sandbox", statusBlocked, bw.Error(), "install bubblewrap, or set sandbox: workspace")
	case abi > 0:
		r.add("sandbox", statusWarning, "sandbox: "+mode+": bubblewrap cannot run here; Landlock only: .git, .rein and .claude "+
			"in the workspace are not read-only, sensitive files are not hidden", "install bubblewrap (apt-get install bubblewrap)")
	default:
		r.add("sandbox", statusWarning, "sandbox: "+mode+": neither bubblewrap nor Landlock can run here; commands run on the host",
			"install bubblewrap (apt-get install bubblewrap)")
	}
	checkSandboxPolicy(r, l)
}

// checkSandboxPolicy shows the sandbox a run gets, resolved from every
// layer (SPEC TOOL-7): profile, what commands may write, the network and
// what stays protected; the settings that widen it are named.
func checkSandboxPolicy(r *report, l *workspace.Loaded) {
	_, lines, err := sandboxPolicy(l)
	if err != nil {
		r.add("sandbox policy", statusBlocked, err.Error(), "fix the setting")
		return
	}
	for _, line := range lines {
		r.add("sandbox policy", statusOK, line, "")
	}
}

func checkSessions(r *report, l *workspace.Loaded) {
	dir := l.Effective.String(workspace.SessionsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		r.add("sessions", statusBlocked, err.Error(), "make the directory writable, or set sessions_dir (REIN_SESSIONS_DIR)")
		return
	}
	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		r.add("sessions", statusBlocked, "cannot write in "+dir+": "+err.Error(), "make the directory writable, or set sessions_dir (REIN_SESSIONS_DIR)")
		return
	}
	f.Close()
	os.Remove(f.Name())
	r.add("sessions", statusOK, "kept in "+dir, "")
}

func printReport(w io.Writer, r report) {
	fmt.Fprintf(w, "rein doctor: %s\n\n", r.Status)
	marks := map[string]string{statusOK: "✓", statusWarning: "!", statusBlocked: "✗"}
	for _, c := range r.Checks {
		fmt.Fprintf(w, "  %s %-13s %s\n", marks[c.Status], c.Name, c.Message)
		if c.Next != "" && c.Status != statusOK {
			fmt.Fprintf(w, "    → %s\n", strings.ReplaceAll(c.Next, "\n", "\n      "))
		}
	}
}
