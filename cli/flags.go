package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/workspace"
)

// runOptions are the flags of rein run (and of rein alone).
type runOptions struct {
	prompt             string
	output             string
	model              string
	maxTurns           int
	permissionMode     string
	sandbox            string
	allowedTools       []string
	disallowedTools    []string
	resume             string
	cont               bool
	cwd                string
	systemPrompt       string
	appendSystemPrompt string
	record             string
	timeout            string
	verbose            bool
	killOrphans        bool
	server             string
	agent              string
	images             []string
	// cc are Claude Code's headless flags (ccflags.go), on rein run only.
	cc ccOptions
}

// addRunFlags declares the run flags on cmd.
func addRunFlags(cmd *cobra.Command, o *runOptions) {
	f := cmd.Flags()
	serverFlag(cmd, &o.server, false)
	f.StringVarP(&o.prompt, "prompt", "p", "", "the prompt (\"-\" reads it from stdin); rein -p runs once, as rein run does")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text, json or stream-json")
	f.StringVarP(&o.model, "model", "m", "", "model: provider/model, a bare name (claude-…, gpt-…, gemini-…), a profile, or replay:PATH")
	f.IntVar(&o.maxTurns, "max-turns", 0, "most model calls for this prompt (default 100)")
	f.StringVar(&o.permissionMode, "permission-mode", "", "strict, default, accept-edits, read-only, plan (read, then a plan to approve) or bypass")
	f.StringVar(&o.sandbox, "sandbox", "", "the sandbox profile of commands for this run: workspace, read-only, on or off (see rein doctor)")
	f.StringArrayVar(&o.allowedTools, "allowed-tools", nil, "allow rules, comma-separated: \"bash(git diff:*),read_file\"")
	f.StringArrayVar(&o.disallowedTools, "disallowed-tools", nil, "deny rules; a bare tool name also hides the tool from the model")
	f.StringVarP(&o.resume, "resume", "r", "", "continue the session with this id (or id prefix)")
	f.BoolVarP(&o.cont, "continue", "c", false, "continue the most recent session of this workspace")
	f.StringVar(&o.cwd, "cwd", "", "work in this directory instead of the current one")
	f.StringVar(&o.systemPrompt, "system-prompt", "", "replace rein's instructions in the system prompt")
	f.StringVar(&o.appendSystemPrompt, "append-system-prompt", "", "add this to the end of the system prompt")
	f.StringVar(&o.record, "record", "", "record the model exchanges to this cassette file (replay with --model replay:FILE)")
	f.StringVar(&o.timeout, "timeout", "", "wall-clock budget of the run, e.g. 10m (default: none)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "show tool calls and retries on stderr even when it is not a terminal")
	f.BoolVar(&o.killOrphans, "kill-orphans", false, "when resuming, stop processes that interrupted tool calls left running")
	f.StringArrayVar(&o.images, "image", nil, "attach this image file (PNG, JPEG, GIF or WebP, up to 5 MiB) to the prompt; repeatable")
	f.StringVar(&o.agent, "agent", "", "run the session as this agent definition: its prompt, tools, mode and model (rein agents list)")
}

// settings returns the configuration values the flags set, keyed by
// setting name; flags not given are left out.
func (o *runOptions) settings(cmd *cobra.Command) map[string]string {
	m := map[string]string{}
	f := cmd.Flags()
	add := func(flag, key, v string) {
		if f.Changed(flag) {
			m[key] = v
		}
	}
	add("model", workspace.Model, o.model)
	add("max-turns", workspace.MaxTurns, fmt.Sprint(o.maxTurns))
	add("permission-mode", workspace.PermissionMode, o.permissionMode)
	if mode := o.cc.ccMode(); mode != "" && !f.Changed("permission-mode") {
		m[workspace.PermissionMode] = mode // --dangerously-skip-permissions, --settings
	}
	add("sandbox", workspace.Sandbox, o.sandbox)
	add("system-prompt", workspace.SystemPrompt, o.systemPrompt)
	add("append-system-prompt", workspace.AppendSystemPrompt, o.appendSystemPrompt)
	add("timeout", workspace.Timeout, o.timeout)
	return m
}

// checkFlags validates the settings flags give (--max-turns 0, --timeout
// abc): a bad one is a usage error, exit code 2.
func checkFlags(flags map[string]string) error {
	if _, err := workspace.FlagLayer(flags); err != nil {
		return usageErrorf("%v", err)
	}
	return nil
}

// checkOutput validates --output.
func (o *runOptions) checkOutput() error {
	switch o.output {
	case "text", "json", "stream-json":
		return nil
	}
	return usageErrorf("--output %q: want text, json or stream-json", o.output)
}

// rules parses --allowed-tools and --disallowed-tools into run-level rules.
// hidden lists the tools a bare deny names: they are not offered at all.
func (o *runOptions) rules() (rules []permission.Rule, hidden []string, err error) {
	for _, l := range []struct {
		action permission.Decision
		specs  []string
	}{{permission.DecisionAllow, o.allowedTools}, {permission.DecisionDeny, o.disallowedTools}} {
		for _, spec := range l.specs {
			for _, text := range splitRules(spec) {
				r, err := permission.ParseRule(l.action, text)
				if err != nil {
					return nil, nil, usageErrorf("rule %q: %v", text, err)
				}
				r.Source = permission.SourceRun
				rules = append(rules, r)
				if l.action == permission.DecisionDeny && r.Pattern == "" && !strings.Contains(r.Tool, "*") {
					hidden = append(hidden, r.Tools()...) // Claude's Edit hides edit_file, multi_edit, write_file
				}
			}
		}
	}
	cr, ch, err := o.cc.ccRules()
	if err != nil {
		return nil, nil, err
	}
	return append(rules, cr...), append(hidden, ch...), nil
}

// splitRules splits a list of rules at commas and white space outside
// parentheses: "bash(git diff:*), read_file" is two rules.
func splitRules(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n'):
			if t := strings.TrimSpace(s[start:i]); t != "" {
				out = append(out, t)
			}
			start = i + 1
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// usageError is a bad command line: exit code 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: ExitUsage, msg: fmt.Sprintf(format, args...)}
}
