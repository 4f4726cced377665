package acp

import (
	"encoding/json"
	"path/filepath"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/tool"
)

// maxToolText bounds the text of a tool's output sent in an update; the
// model saw rein's own capped output, the client a cut of it.
const maxToolText = 64 << 10

// translator turns a run's events into session updates for the client.
type translator struct {
	// root is the workspace root, against which tool paths are made
	// absolute (the protocol's paths are).
	root string
	// calls are the calls started, by id: a call's end carries its
	// output, not its input, which the diff and the plan are made of.
	calls map[string]call
	// window is the model's context window in tokens (0: unknown, no
	// usage updates); cost is what the session cost before this run.
	window int
	cost   float64
	// tools are the session's tools, whose categories give the kind of
	// a tool rein does not name (MCP tools, actions); nil: by name only.
	tools *tool.Set
}

// call is a tool call's name and input.
type call struct {
	name  string
	input json.RawMessage
}

func newTranslator(root string) *translator {
	return &translator{root: root, calls: map[string]call{}}
}

// updates returns the session updates of ev, none for events the client
// has no use for (run start, messages, retries). A sub-agent's events are
// its own conversation's: the task tool's call and result stand for them.
func (t *translator) updates(ev agent.Event) []sdk.SessionUpdate {
	if ev.Subagent != nil {
		return nil
	}
	switch ev.Type {
	case agent.EventTextDelta:
		if ev.Text != "" {
			return []sdk.SessionUpdate{sdk.UpdateAgentMessageText(ev.Text)}
		}
	case agent.EventThinkingDelta:
		if ev.Text != "" {
			return []sdk.SessionUpdate{sdk.UpdateAgentThoughtText(ev.Text)}
		}
	case agent.EventToolStart:
		if tc := ev.Tool; tc != nil {
			return []sdk.SessionUpdate{t.toolStart(tc.ID, tc.Name, tc.Input)}
		}
	case agent.EventUsage:
		if u := ev.Usage; u != nil && t.window > 0 {
			return []sdk.SessionUpdate{t.usage(u)}
		}
	case agent.EventToolEnd:
		if tc := ev.Tool; tc != nil {
			ok := tc.Outcome == agent.OutcomeOK || (tc.Outcome == "" && !tc.IsError)
			return t.toolEnd(tc.ID, tc.Output, ok)
		}
	}
	return nil
}

// usage is the usage_update of a model call: the tokens now in context
// (the call's prompt and its answer) against the model's window, and the
// session's cost so far when rein knows the model's prices.
func (t *translator) usage(u *agent.UsageEvent) sdk.SessionUpdate {
	up := &sdk.SessionUsageUpdate{Used: int(u.Turn.PromptTokens() + u.Turn.OutputTokens), Size: t.window}
	if c := t.cost + u.CostUSD; c > 0 {
		up.Cost = &sdk.Cost{Amount: c, Currency: "USD"}
	}
	return sdk.SessionUpdate{UsageUpdate: up}
}

// toolStart is the tool_call update of a call starting: its title, kind,
// locations, input and, for an edit, the diff it proposes.
func (t *translator) toolStart(id, name string, input json.RawMessage) sdk.SessionUpdate {
	t.calls[id] = call{name, input}
	var cat tool.Category
	if e, ok := t.tools.Get(name); ok {
		cat = e.Meta.Category
	}
	opts := []sdk.ToolCallStartOpt{sdk.WithStartKind(toolKind(name, cat)), sdk.WithStartStatus(sdk.ToolCallStatusInProgress),
		sdk.WithStartRawInput(rawJSON(input))}
	if loc := t.locations(input); loc != nil {
		opts = append(opts, sdk.WithStartLocations(loc))
	}
	if d := t.diffs(name, input); d != nil {
		opts = append(opts, sdk.WithStartContent(d))
	}
	return sdk.StartToolCall(sdk.ToolCallId(id), callTitle(name, input), opts...)
}

// toolEnd is the tool_call_update of a call that ended: completed with its
// output (an edit's diff), or failed with the error the model saw; a
// todo_write that succeeded adds the plan it set.
func (t *translator) toolEnd(id, output string, ok bool) []sdk.SessionUpdate {
	c := t.calls[id]
	delete(t.calls, id)
	name, input := c.name, c.input
	status := sdk.ToolCallStatusCompleted
	if !ok {
		status = sdk.ToolCallStatusFailed
	}
	content := []sdk.ToolCallContent{}
	if d := t.diffs(name, input); d != nil && ok {
		content = d
	} else if output != "" {
		content = append(content, sdk.ToolContent(sdk.TextBlock(clipText(output, maxToolText))))
	}
	out := []sdk.SessionUpdate{sdk.UpdateToolCall(sdk.ToolCallId(id), sdk.WithUpdateStatus(status), sdk.WithUpdateContent(content),
		sdk.WithUpdateRawOutput(map[string]any{"output": clipText(output, maxToolText)}))}
	if p, isPlan := plan(name, input); isPlan && ok {
		out = append(out, p)
	}
	return out
}

// toolKind is the protocol's kind of a tool: by rein's built-in names,
// else by the tool's permission category.
func toolKind(name string, cat tool.Category) sdk.ToolKind {
	switch name {
	case "read_file", "list_dir":
		return sdk.ToolKindRead
	case "edit_file", "multi_edit", "write_file":
		return sdk.ToolKindEdit
	case "bash":
		return sdk.ToolKindExecute
	case "grep", "glob", "kb_search":
		return sdk.ToolKindSearch
	case "web_fetch", "web_search":
		return sdk.ToolKindFetch
	case "todo_write":
		return sdk.ToolKindThink
	case "exit_plan_mode", "enter_plan_mode":
		return sdk.ToolKindSwitchMode
	}
	switch cat {
	case tool.CategoryRead:
		return sdk.ToolKindRead
	case tool.CategoryEdit:
		return sdk.ToolKindEdit
	case tool.CategoryExecute:
		return sdk.ToolKindExecute
	case tool.CategoryNetwork:
		return sdk.ToolKindFetch
	}
	return sdk.ToolKindOther
}

// toolArgs are the arguments of rein's tools a title, a location or a
// diff is made of.
type toolArgs struct {
	Path      string `json:"path"`
	Command   string `json:"command"`
	Pattern   string `json:"pattern"`
	URL       string `json:"url"`
	Query     string `json:"query"`
	OldString string `json:"old_string"`
	NewString string `json:"new_string"`
	Content   string `json:"content"`
	Edits     []struct {
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	} `json:"edits"`
	Todos []struct {
		Content string `json:"content"`
		Status  string `json:"status"`
	} `json:"todos"`
}

func parseArgs(input json.RawMessage) toolArgs {
	var a toolArgs
	_ = json.Unmarshal(input, &a) // a tool's input that is not this shape has no title argument
	return a
}

// callTitle is a call in a few words: the tool and its main argument.
func callTitle(name string, input json.RawMessage) string {
	a := parseArgs(input)
	for _, s := range []string{a.Command, a.Path, a.Pattern, a.URL, a.Query} {
		if s != "" {
			return name + ": " + clipText(s, 200)
		}
	}
	return name
}

// locations are the file a call works on, made absolute.
func (t *translator) locations(input json.RawMessage) []sdk.ToolCallLocation {
	p := t.abs(parseArgs(input).Path)
	if p == "" {
		return nil
	}
	return []sdk.ToolCallLocation{{Path: p}}
}

// abs makes a tool's path absolute in the workspace ("" stays "").
func (t *translator) abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(t.root, p)
}

// diffs are the changes an edit makes, as the protocol's diff content: the
// replaced text and its replacement for edit_file and multi_edit, the whole
// new content for write_file. Nil for every other tool.
func (t *translator) diffs(name string, input json.RawMessage) []sdk.ToolCallContent {
	a := parseArgs(input)
	p := t.abs(a.Path)
	if p == "" {
		return nil
	}
	switch name {
	case "edit_file":
		return []sdk.ToolCallContent{sdk.ToolDiffContent(p, a.NewString, a.OldString)}
	case "multi_edit":
		var out []sdk.ToolCallContent
		for _, e := range a.Edits {
			out = append(out, sdk.ToolDiffContent(p, e.NewString, e.OldString))
		}
		return out
	case "write_file":
		return []sdk.ToolCallContent{sdk.ToolDiffContent(p, a.Content)}
	}
	return nil
}

// plan is the plan update of a todo_write call: its list as plan entries.
func plan(name string, input json.RawMessage) (sdk.SessionUpdate, bool) {
	if name != "todo_write" {
		return sdk.SessionUpdate{}, false
	}
	entries := []sdk.PlanEntry{}
	for _, td := range parseArgs(input).Todos {
		st := sdk.PlanEntryStatusPending
		switch td.Status {
		case "in_progress":
			st = sdk.PlanEntryStatusInProgress
		case "completed":
			st = sdk.PlanEntryStatusCompleted
		}
		entries = append(entries, sdk.PlanEntry{Content: td.Content, Status: st, Priority: sdk.PlanEntryPriorityMedium})
	}
	return sdk.UpdatePlan(entries...), true
}

// rawJSON is a tool's input as a JSON value for rawInput (nil when it is
// not JSON).
func rawJSON(input json.RawMessage) any {
	if len(input) == 0 || !json.Valid(input) {
		return nil
	}
	return input
}

// clipText cuts s to at most n bytes on a rune boundary, saying so.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "\n[… cut]"
}
