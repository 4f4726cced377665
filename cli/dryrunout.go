package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/runner"
)

// dryRunSchema names the version of `rein run --dry-run --output json`
// (docs/cli.md): fields are only added within a version.
const dryRunSchema = "rein.dry-run/1"

// dryReport is the result of `rein run --dry-run` (SPEC CLI-5); its JSON
// is documented in docs/cli.md.
type dryReport struct {
	Schema   string `json:"schema"`
	Ready    bool   `json:"ready"`
	ExitCode int    `json:"exit_code"`
	// Workspace is the workspace's root ("" when the configuration did not load).
	Workspace string         `json:"workspace"`
	Model     *dryModel      `json:"model"`
	Checks    []check        `json:"checks"`
	Trust     *trustView     `json:"trust"`
	Hooks     dryHooks       `json:"hooks"`
	MCP       []dryMCPServer `json:"mcp"`
	// MCPNote says that the MCP servers were started, when some were.
	MCPNote      string        `json:"mcp_note,omitempty"`
	SystemPrompt string        `json:"system_prompt"`
	Tools        []dryToolView `json:"tools"`
	Skills       []string      `json:"skills"`
	Request      *dryRequest   `json:"request"`
	Tokens       *dryTokens    `json:"tokens"`
	Cost         *dryCostView  `json:"cost"`
	// Notes are what a run would print on stderr before its first model call.
	Notes []string `json:"notes"`
}

// dryModel is the model a run would call.
type dryModel struct {
	Label         string `json:"label"`
	Provider      string `json:"provider"`
	Name          string `json:"name"`
	ContextWindow int    `json:"context_window"`
	MaxOutput     int    `json:"max_output"`
	// Known is false when the registry has no entry for the model (its
	// limits are conservative defaults, its price unknown).
	Known bool `json:"known"`
}

// dryHooks says how many hooks apply and that none ran.
type dryHooks struct {
	Count int    `json:"count"`
	Run   bool   `json:"run"`
	Note  string `json:"note"`
}

// dryMCPServer is one MCP server's state.
type dryMCPServer struct {
	Server    string `json:"server"`
	State     string `json:"state"`
	Transport string `json:"transport,omitempty"`
	Tools     int    `json:"tools"`
	Withheld  bool   `json:"withheld,omitempty"`
	Error     string `json:"error,omitempty"`
}

// dryToolView is one tool definition as the request sends it.
type dryToolView struct {
	Name        string          `json:"name"`
	Origin      string          `json:"origin"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// dryRequest is the rest of the first request.
type dryRequest struct {
	Model string `json:"model"`
	// MaxTokens is the output limit the request sets; 0 leaves it to the
	// adapter (Anthropic's sends 8192).
	MaxTokens      int    `json:"max_tokens"`
	ThinkingBudget int    `json:"thinking_budget,omitempty"`
	ThinkingEffort string `json:"thinking_effort,omitempty"`
	Messages       int    `json:"messages"`
	Prompt         string `json:"prompt"`
}

// dryTokens is the first request's size, estimated.
type dryTokens struct {
	System        int    `json:"system"`
	Tools         int    `json:"tools"`
	Messages      int    `json:"messages"`
	Total         int    `json:"total"`
	ContextWindow int    `json:"context_window"`
	Method        string `json:"method"`
	CountEndpoint string `json:"count_endpoint,omitempty"`
}

// dryCostView is the first request's estimated cost in USD.
type dryCostView struct {
	Known         bool    `json:"known"`
	InputUSD      float64 `json:"input_usd"`
	CacheWriteUSD float64 `json:"cache_write_usd,omitempty"`
	MaxOutputUSD  float64 `json:"max_output_usd,omitempty"`
	Assumes       string  `json:"assumes"`
}

func (rep *dryReport) add(name, status, msg, next string) {
	rep.Checks = append(rep.Checks, check{Name: name, Status: status, Message: msg, Next: next})
}

// modelView is the report's view of m.
func modelView(m *runner.Model) *dryModel {
	return &dryModel{Label: m.Label, Provider: m.ProviderName, Name: m.Name, ContextWindow: m.Caps.ContextWindow,
		MaxOutput: m.Caps.MaxOutput, Known: m.Warning == ""}
}

// printDryRun settles the verdict, prints the report and returns the exit
// code: ExitNotReady when a check is blocked.
func (a *App) printDryRun(o *runOptions, rep *dryReport) error {
	rep.Ready, rep.ExitCode = true, ExitOK
	for _, c := range rep.Checks {
		if c.Status == statusBlocked {
			rep.Ready, rep.ExitCode = false, ExitNotReady
		}
	}
	if rep.Checks == nil {
		rep.Checks = []check{}
	}
	if rep.Notes == nil {
		rep.Notes = []string{}
	}
	if rep.MCP == nil {
		rep.MCP = []dryMCPServer{}
	}
	if rep.Tools == nil {
		rep.Tools = []dryToolView{}
	}
	if rep.Skills == nil {
		rep.Skills = []string{}
	}
	var err error
	if o.output == "json" {
		err = writeJSON(a.Stdout, rep)
	} else {
		err = printDryText(a.Stdout, rep)
	}
	if err != nil {
		return fail(ExitError, "writing the output: %v", err)
	}
	if !rep.Ready {
		return &exitError{code: ExitNotReady}
	}
	return nil
}

// printDryText prints the report in sections.
func printDryText(w io.Writer, rep *dryReport) error {
	var b strings.Builder
	verdict := "ready"
	if !rep.Ready {
		verdict = "not ready"
	}
	fmt.Fprintf(&b, "rein run --dry-run: %s (no model was called, nothing was stored)\n\n## Readiness\n", verdict)
	marks := map[string]string{statusOK: "✓", statusWarning: "!", statusBlocked: "✗"}
	for _, c := range rep.Checks {
		fmt.Fprintf(&b, "  %s %-13s %s\n", marks[c.Status], c.Name, c.Message)
		if c.Next != "" && c.Status != statusOK {
			fmt.Fprintf(&b, "    → %s\n", c.Next)
		}
	}
	fmt.Fprintf(&b, "  · %-13s %d apply; %s\n", "hooks", rep.Hooks.Count, rep.Hooks.Note)
	if rep.MCPNote != "" {
		fmt.Fprintf(&b, "  · %-13s %s\n", "mcp", rep.MCPNote)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "  · %-13s %s\n", "note", n)
	}
	if rep.Request != nil {
		fmt.Fprintf(&b, "\n## System prompt (%d tokens)\n%s\n", rep.Tokens.System, rep.SystemPrompt)
		fmt.Fprintf(&b, "\n## Tools (%d, %d tokens)\n", len(rep.Tools), rep.Tokens.Tools)
		for _, t := range rep.Tools {
			desc, _, _ := strings.Cut(t.Description, "\n")
			fmt.Fprintf(&b, "  %-22s %-8s %s\n", t.Name, t.Origin, clip(desc, 80))
		}
		fmt.Fprintf(&b, "\n## Skills (%d)\n", len(rep.Skills))
		for _, s := range rep.Skills {
			fmt.Fprintf(&b, "  %s\n", s)
		}
		r, t := rep.Request, rep.Tokens
		limit := fmt.Sprint(r.MaxTokens)
		if r.MaxTokens == 0 {
			limit = "not set: the provider's default"
		}
		fmt.Fprintf(&b, "\n## First request\n  model        %s\n  max tokens   %s\n", rep.Model.Label, limit)
		if r.ThinkingBudget > 0 || r.ThinkingEffort != "" {
			fmt.Fprintf(&b, "  thinking     budget %d %s\n", r.ThinkingBudget, r.ThinkingEffort)
		}
		fmt.Fprintf(&b, "  messages     %d (the prompt: %d tokens)\n", r.Messages, t.Messages)
		fmt.Fprintf(&b, "  size         ~%d tokens (%s: system %d + tools %d + messages %d) of a %d-token window\n",
			t.Total, t.Method, t.System, t.Tools, t.Messages, t.ContextWindow)
		if t.CountEndpoint != "" {
			fmt.Fprintf(&b, "  count        the vendor counts exactly at %s\n", t.CountEndpoint)
		}
		if c := rep.Cost; c.Known {
			fmt.Fprintf(&b, "  cost         ~$%.6f input", c.InputUSD)
			if c.CacheWriteUSD > 0 {
				fmt.Fprintf(&b, " ($%.6f if written to the cache)", c.CacheWriteUSD)
			}
			if c.MaxOutputUSD > 0 {
				fmt.Fprintf(&b, "; reply at most $%.6f", c.MaxOutputUSD)
			}
			fmt.Fprintf(&b, "\n               assumes %s\n", c.Assumes)
		} else {
			fmt.Fprintf(&b, "  cost         unknown: %s\n", c.Assumes)
		}
	}
	_, err := io.WriteString(w, termSafe(b.String()))
	return err
}

// termSafe returns s fit for a terminal: what the workspace, an MCP
// server or its stderr wrote (the system prompt, tool descriptions,
// errors) may hold escape sequences that rewrite the screen or the
// clipboard. Control characters other than tab and newline, C1 controls
// and invalid UTF-8 become U+FFFD; CR LF becomes LF. The JSON output keeps
// the text exact, escaped.
func termSafe(s string) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\r\n", "\n")
	return strings.Map(func(c rune) rune {
		if c < ' ' && c != '\t' && c != '\n' || c >= 0x7f && c < 0xa0 {
			return utf8.RuneError
		}
		return c
	}, s)
}
