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
		Short: "Check that rein is ready to run here: configuration, model and key, tools, sessions",
		Long: `Check that rein is ready to run here. Each problem comes with the next thing
to do. The verdict is ready, warning (rein runs, something is worth fixing) or
blocked (a run would fail); blocked exits with code 1. --online also checks
the key with a cheap call to the provider.`,
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
		r.add("configuration", statusWarning, w, "remove the setting from the workspace file, or allow it for this run with the flag or variable named")
	}
	for _, u := range l.Unknown() {
		r.add("configuration", statusWarning, "unknown key "+u+" is ignored", "correct or remove it; rein config show lists the settings")
	}
	checkTrust(&r, l)
	checkHooks(&r, l)
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
	r.Trust = &trustView{Workspace: l.Workspace.Root, Trusted: t.Trusted, Lost: t.Lost, Extras: t.Extras, Ignored: t.Ignored()}
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
		r.add("trust", statusWarning, "trust lost: the workspace's settings, hooks or agents changed since you trusted it", next)
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
		r.add("model", statusBlocked, err.Error(), "set the key, or pick another model: rein provider list, --model")
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
		r.add("sandbox", statusWarning, "sandbox: off: commands run on the host", "set sandbox: auto")
	case bw == nil && abi > 0:
		r.add("sandbox", statusOK, fmt.Sprintf("sandbox: %s: bubblewrap, with Landlock (ABI %d) inside", mode, abi), "")
	case bw == nil:
		r.add("sandbox", statusOK, fmt.Sprintf("sandbox: %s: bubblewrap (no Landlock in this kernel)", mode), "")
	case mode == "on":
		r.add("sandbox", statusBlocked, bw.Error(), "install bubblewrap, or set sandbox: auto")
	case abi > 0:
		r.add("sandbox", statusWarning, "sandbox: auto: bubblewrap cannot run here; Landlock only: .git, .rein and .claude "+
			"in the workspace are not read-only, sensitive files are not hidden", "install bubblewrap (apt-get install bubblewrap)")
	default:
		r.add("sandbox", statusWarning, "sandbox: auto: neither bubblewrap nor Landlock can run here; commands run on the host",
			"install bubblewrap (apt-get install bubblewrap)")
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
