package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/anthropic"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/tokens"
	"github.com/reinhq/rein/tokens/llmtokens"
	"github.com/reinhq/rein/tool/mcptool"
	"github.com/reinhq/rein/workspace"
)

// ExitNotReady is the exit code of `rein run --dry-run` when a real run
// would not start, or would start without part of what the workspace
// configures (SPEC CLI-5): a check is blocked.
const ExitNotReady = 11

// dryRunHelp is the --dry-run part of `rein run --help`.
const dryRunHelp = `--dry-run shows everything up to the first model call, and calls no model
(SPEC CLI-5): readiness (the model and its key, the workspace's trust, its
configuration problems, the MCP servers), the system prompt, the tools and
skills offered, and the first request's size in tokens (an estimate; no count
endpoint is called) and its estimated cost. The request is built by the real
agent loop, which stops where it would call the model: what is shown is what
a run of the same prompt sends. Nothing is stored (no session is created) and
no hook runs: session_start and user_prompt_submit hooks may have side
effects, so context such a hook adds is not in the request. The MCP servers a
run would start (yours, and a trusted workspace's) are started, since their
tools are part of the request, and stopped at the end; an untrusted
workspace's are not. --output json prints one object (docs/cli.md). The exit
code is 0 when ready, 11 when a check is blocked, 2 for bad flags.

`

// dryRunMCPStarted says, in the output, that MCP servers start in a dry run.
const dryRunMCPStarted = "the MCP servers a run would start were started to list their tools; they stop as the dry run ends"

// dryRunNoHooks says, in the output, that a dry run runs no hook.
const dryRunNoHooks = "hooks do not run in a dry run (they may have side effects): context a user_prompt_submit hook adds is not counted"

// noteLog keeps the notes a run would print on stderr, one per write.
type noteLog struct {
	mu    sync.Mutex
	notes []string
}

func (n *noteLog) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(strings.TrimPrefix(string(p), "rein: "))
	n.mu.Lock()
	defer n.mu.Unlock()
	if msg != "" && !slices.Contains(n.notes, msg) {
		n.notes = append(n.notes, msg)
	}
	return len(p), nil
}

func (n *noteLog) all() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.notes)
}

// checkDryRunFlags refuses what a dry run cannot do: it shows a new
// session's first request on this machine, and records nothing.
func checkDryRunFlags(cmd *cobra.Command, o *runOptions) error {
	if o.output != "text" && o.output != "json" {
		return usageErrorf("--dry-run --output %q: want text or json", o.output)
	}
	for _, name := range []string{"server", "resume", "continue", "record", "kill-orphans"} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			return usageErrorf("--dry-run shows a new session's first request on this machine: not with --%s", name)
		}
	}
	return nil
}

// dryRun is `rein run --dry-run`: it reports readiness and builds the first
// request of a run without calling the model (SPEC CLI-5).
func (a *App) dryRun(cmd *cobra.Command, o *runOptions, args []string) (err error) {
	if err := checkDryRunFlags(cmd, o); err != nil {
		return err
	}
	prompt, _, err := a.readPrompt(o, args)
	if err != nil {
		return err
	}
	rep := &dryReport{Schema: dryRunSchema, Hooks: dryHooks{Run: false, Note: dryRunNoHooks}}
	notes := &noteLog{}
	e, err := a.newEngine(cmd, o, notes, nil)
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) && ee.code == ExitUsage {
			return err
		}
		rep.add("configuration", statusBlocked, err.Error(), "fix what the message names; rein doctor checks the configuration")
		return a.printDryRun(o, rep)
	}
	defer func() {
		if cerr := e.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	l := e.cfg
	rep.Workspace = l.Workspace.Root
	rep.add("configuration", statusOK, "workspace "+l.Workspace.Root, "")
	for _, u := range l.Unknown() {
		rep.add("configuration", statusWarning, "unknown key "+u+" is ignored", "correct or remove it; rein config show lists the settings")
	}
	dryTrust(rep, l)
	var defs report
	checkDefinitions(&defs, l)
	rep.Checks = append(rep.Checks, defs.Checks...)
	rep.Hooks.Count = e.hookCount()
	if err := e.open(cmd.Context(), o); err != nil {
		name := "model"
		if llm.KindOf(err) == llm.KindAuth || strings.Contains(err.Error(), "no API key") {
			name = "auth"
		}
		rep.add(name, statusBlocked, err.Error(), "set the key the message names, or choose another model with --model (rein provider list)")
		rep.Notes = notes.all()
		return a.printDryRun(o, rep)
	}
	m := e.Model()
	rep.Model = modelView(m)
	rep.add("model", statusOK, m.Label, "")
	if m.Warning != "" {
		rep.add("model", statusWarning, m.Warning, "add the model to .rein/models.yaml with its context window and prices")
	}
	a.dryAuth(rep, e, m)
	if f := m.Frame; f != nil && f.Prompt != "" && prompt == "" {
		prompt = f.Prompt // a cassette replays its own prompt
	}
	if prompt, err = e.drySlash(cmd.Context(), rep, prompt); err != nil { // slashcmd.go
		return err
	}
	msg, err := e.userMessage(prompt, o.images)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if msg == nil {
		return usageErrorf("no prompt: give it as an argument, with -p, or on stdin (-)")
	}
	dr, err := e.DryRunMessage(cmd.Context(), msg)
	if err != nil {
		rep.add("request", statusBlocked, err.Error(), "fix what the message names; rein doctor checks the configuration")
		rep.Notes = notes.all()
		return a.printDryRun(o, rep)
	}
	dryMCP(rep, l, e.Setup().MCPStatus())
	rep.fill(dr, m)
	for _, w := range dr.Warnings {
		if !slices.Contains(l.Trust.Warnings, w) && !strings.HasPrefix(w, "MCP server ") { // the trust and mcp checks say those
			rep.add("warning", statusWarning, w, "")
		}
	}
	for _, n := range notes.all() {
		if !slices.Contains(dr.Warnings, n) && !slices.Contains(l.Trust.Warnings, n) {
			rep.Notes = append(rep.Notes, n)
		}
	}
	return a.printDryRun(o, rep)
}

// hookCount is how many hooks a run of the engine would register.
func (e *engine) hookCount() int {
	specs, err := e.cfg.Hooks()
	if err != nil {
		return 0
	}
	return len(specs)
}

// dryTrust reports the workspace's trust: extras it brings that are not
// trusted block, since a run would go on without them (SPEC PERM-5).
func dryTrust(rep *dryReport, l *workspace.Loaded) {
	var r report
	checkTrust(&r, l)
	rep.Trust = r.Trust
	ignored := l.Trust.Ignored()
	if len(ignored) == 0 {
		rep.Checks = append(rep.Checks, r.Checks...)
		return
	}
	if l.Trust.Err != nil {
		rep.add("trust", statusWarning, "workspace trust cannot be checked: "+l.Trust.Err.Error(), "fix what the error names")
	}
	names := make([]string, len(ignored))
	for i, x := range ignored {
		names[i] = x.String()
	}
	what := "the workspace is not trusted"
	if l.Trust.Lost {
		what = "the workspace's trust was lost (" + strings.Join(l.Trust.Changed, "; ") + ")"
	}
	rep.add("trust", statusBlocked, fmt.Sprintf("%s: a run goes on without %d extra(s) it brings: %s", what, len(ignored), strings.Join(names, "; ")),
		"review them, then trust the workspace: rein trust "+l.Workspace.Root)
}

// dryAuth says where the model's key comes from, never the key.
func (a *App) dryAuth(rep *dryReport, e *engine, m *runner.Model) {
	if m.Frame != nil {
		rep.add("auth", statusOK, "a replayed cassette needs no key", "")
		return
	}
	profile, _, _ := strings.Cut(m.Label, "/")
	for _, p := range e.Setup().Registry().Profiles() {
		if p.Name != profile {
			continue
		}
		switch {
		case p.OAuth != nil:
			rep.add("auth", statusOK, "profile "+p.Name+" signs in with OAuth", "")
			return
		case p.APIKey != "":
			rep.add("auth", statusOK, "profile "+p.Name+": the key is in the profile (api_key)", "")
			return
		}
		for _, n := range strings.Split(p.APIKeyEnv, ",") {
			if n = strings.TrimSpace(n); n != "" && strings.TrimSpace(a.getenv(n)) != "" {
				rep.add("auth", statusOK, "profile "+p.Name+": key from $"+n, "")
				return
			}
		}
		rep.add("auth", statusOK, "profile "+p.Name+" declares no key (a keyless local server)", "")
		return
	}
	rep.add("auth", statusOK, m.Label+" is provided by the host program", "")
}

// dryMCP reports the state of the MCP servers: disabled ones, and those a
// run starts. One that fails or is withheld is a warning: runs go on
// without its tools.
func dryMCP(rep *dryReport, l *workspace.Loaded, sts []mcptool.Status) {
	for _, d := range l.Definitions().MCP {
		if d.Disabled {
			rep.MCP = append(rep.MCP, dryMCPServer{Server: d.Name, State: "disabled"})
		}
	}
	for _, st := range sts {
		v := dryMCPServer{Server: st.Server, State: string(st.State), Transport: st.Transport, Tools: st.Tools, Withheld: st.Withheld, Error: st.Err}
		rep.MCP = append(rep.MCP, v)
		switch {
		case st.Withheld:
			rep.add("mcp", statusWarning, fmt.Sprintf("%s: withheld: its definitions look like a prompt injection: %s", st.Server, st.Screening.Explain(3)),
				fmt.Sprintf("review them (rein mcp test %s), then accept them (rein mcp accept %s)", st.Server, st.Server))
		case st.State == mcptool.StateReady:
			rep.add("mcp", statusOK, fmt.Sprintf("%s: ready, %d tool(s) (%s)", st.Server, st.Tools, st.Transport), "")
		default:
			rep.add("mcp", statusWarning, fmt.Sprintf("%s: %s: %s", st.Server, st.State, st.Err),
				fmt.Sprintf("rein mcp test %s shows more; a run goes on without its tools", st.Server))
		}
	}
	if len(sts) > 0 {
		rep.MCPNote = dryRunMCPStarted
	}
}

// fill sets what the captured request shows: the prompt, tools, skills,
// size and cost.
func (rep *dryReport) fill(dr *runner.DryRun, m *runner.Model) {
	req := dr.Request
	rep.SystemPrompt = req.System
	rep.Skills = dr.Skills
	if rep.Skills == nil {
		rep.Skills = []string{}
	}
	rep.Tools = make([]dryToolView, len(req.Tools))
	for i, s := range req.Tools {
		rep.Tools[i] = dryToolView{Name: s.Name, Origin: string(dr.Tools[i].Origin), Description: s.Description, InputSchema: s.InputSchema}
	}
	rep.Request = &dryRequest{Model: req.Model, MaxTokens: req.MaxTokens, Messages: len(req.Messages)}
	if t := req.Thinking; t != nil {
		rep.Request.ThinkingBudget, rep.Request.ThinkingEffort = t.BudgetTokens, t.Effort
	}
	if n := len(req.Messages); n > 0 {
		rep.Request.Prompt = req.Messages[n-1].TextOf()
	}
	tk := dryTokens{System: tokens.Estimate(req.System), Tools: llmtokens.Tools(req.Tools), Method: "estimate",
		ContextWindow: m.Caps.ContextWindow, CountEndpoint: countEndpoint(m)}
	for i := range req.Messages {
		tk.Messages += llmtokens.Message(&req.Messages[i], llmtokens.ImageTokens)
	}
	tk.Total = tk.System + tk.Tools + tk.Messages
	rep.Tokens = &tk
	rep.Cost = dryCost(m, tk.Total, req.MaxTokens)
}

// countEndpoint names the vendor's token-count endpoint for the model's
// provider ("" when rein knows none). A dry run does not call it.
func countEndpoint(m *runner.Model) string {
	if m.Frame != nil {
		return ""
	}
	switch m.ProviderName {
	case "anthropic":
		return "POST /v1/messages/count_tokens (not called)"
	case "google":
		return "models/{model}:countTokens (not called)"
	}
	return ""
}

// dryCost prices the first request: its input tokens, uncached (a new
// session's cache is cold), and the most its reply could cost.
func dryCost(m *runner.Model, input, maxTokens int) *dryCostView {
	p := m.Caps.Price
	if p.InputPerMTok == 0 && p.OutputPerMTok == 0 {
		return &dryCostView{Known: false, Assumes: "the registry has no price for " + m.Label + " (add it to .rein/models.yaml)"}
	}
	c := &dryCostView{Known: true, InputUSD: float64(input) * p.InputPerMTok / 1e6,
		Assumes: "estimated input tokens at the uncached input price (a new session reads nothing from the prompt cache)"}
	if p.CacheWritePerMTok > 0 && p.CacheWritePerMTok != p.InputPerMTok {
		c.CacheWriteUSD = float64(input) * p.CacheWritePerMTok / 1e6
		c.Assumes += "; cache_write_usd is the input's price should the provider write all of it to its cache"
	}
	out := maxTokens
	switch {
	case out > 0:
	case m.ProviderName == "anthropic":
		out = anthropic.DefaultMaxTokens // what the adapter sends for 0
	default:
		out = m.Caps.MaxOutput
	}
	if out > 0 {
		c.MaxOutputUSD = float64(out) * p.OutputPerMTok / 1e6
		c.Assumes += fmt.Sprintf("; max_output_usd is a reply of %d tokens, the most it may be", out)
	}
	return c
}
