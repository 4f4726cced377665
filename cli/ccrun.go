package cli

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/mcptool"
	"github.com/reinhq/rein/workspace"
)

// ccBind applies what Claude Code's flags ask of the engine once it is
// open: the guards of --dangerously-skip-permissions, and the session
// --session-id names, created now so that an id in use is refused before
// anything runs (as Claude Code refuses it).
func (o *runOptions) ccBind(ctx context.Context, e *engine) error {
	if err := o.cc.guardBypass(e.cfg); err != nil {
		return err
	}
	id := o.cc.sessionID
	if id == "" {
		return nil
	}
	err := e.Create(ctx, &session.Session{ID: strings.ToLower(id)})
	switch {
	case errors.Is(err, session.ErrExists):
		return usageErrorf("--session-id %s is already in use; go on with it with --resume %s", id, strings.ToLower(id))
	case err != nil:
		return fail(ExitError, "--session-id %s: %v", id, err)
	}
	return nil
}

// ccSinkFor returns the writer of --output-format json or stream-json.
func (a *App) ccSinkFor(o *runOptions, e *engine) *ccSink {
	return newCCSink(a.Stdout, o.cc.outputFormat, o.cc.partial, func() ccInitInfo {
		_, hidden, _ := o.rules() // checked when the engine was built
		return a.ccInfo(e, hidden)
	})
}

// ccInfo describes the engine for system/init: its tools are the
// session's, and the task tool when agents are defined and not hidden.
func (a *App) ccInfo(e *engine, hidden []string) ccInitInfo {
	m := e.Model()
	i := ccInitInfo{cwd: e.Workspace().Root, model: m.Name, apiKeySource: "none",
		contextWindow: m.Caps.ContextWindow, maxOutput: m.Caps.MaxOutput,
		permissionMode: ccModeName(e.cfg.Effective.String(workspace.PermissionMode))}
	if m.ProviderName == "anthropic" && a.getenv("ANTHROPIC_API_KEY") != "" {
		i.apiKeySource = "ANTHROPIC_API_KEY"
	}
	if set := e.Tools(); set != nil {
		for _, name := range set.Names() {
			i.tools = append(i.tools, name)
			if en, ok := set.Get(name); ok && en.Origin == tool.OriginSkill {
				i.skills = append(i.skills, name)
			}
		}
	}
	for _, st := range e.Setup().MCPStatus() {
		i.mcp = append(i.mcp, ccMCPServer{Name: st.Server, Status: ccMCPStatus(st.State)})
	}
	if d := e.cfg.Definitions(); d != nil {
		for _, ag := range d.Agents {
			i.agents = append(i.agents, ag.Name)
		}
	}
	if len(i.agents) > 0 && !slices.Contains(hidden, "task") && !slices.Contains(i.tools, "task") {
		i.tools = append(i.tools, "task")
	}
	return i
}

// ccModeName is Claude Code's name of a rein permission mode; strict and
// read-only, which Claude Code lacks, keep rein's.
func ccModeName(mode string) string {
	switch permission.Mode(mode) {
	case permission.ModeDefault, "":
		return "default"
	case permission.ModeAcceptEdits:
		return "acceptEdits"
	case permission.ModeBypass:
		return "bypassPermissions"
	}
	return mode
}

// ccMCPStatus is Claude Code's name of an MCP server's state.
func ccMCPStatus(s mcptool.State) string {
	switch s {
	case mcptool.StateReady:
		return "connected"
	case mcptool.StateConnecting, mcptool.StateReconnecting:
		return "pending"
	}
	return "failed"
}

// ccStream runs the user messages of --input-format stream-json one after
// the other in the session, each ending with its result line; the
// command's exit code is the worst of theirs.
func (a *App) ccStream(ctx context.Context, e *engine, out *ccSink, approver permission.Approver) error {
	var last error
	runs := 0
	err := ccInputs(a.Stdin, a.Stdout, func(m *llm.Message) error {
		runs++
		done, err := runMessage(ctx, e, m, approver, nil, out)
		if err != nil {
			return err
		}
		if rerr := ccFinish(done, e.SessionID()); rerr != nil && (last == nil || exitCodeOf(rerr) > exitCodeOf(last)) {
			last = rerr
		}
		if done != nil && done.Reason == agent.ReasonCancelled {
			return last
		}
		return nil
	})
	if err != nil {
		return err
	}
	if runs == 0 {
		return usageErrorf("--input-format stream-json: no user message on stdin")
	}
	return last
}

// runMessage runs one message and writes its events to out; grant are
// the allow rules of this run only (a custom slash command's
// allowed-tools; nil for none).
func runMessage(ctx context.Context, e *engine, msg *llm.Message, approver permission.Approver, grant []permission.Rule, out sink) (*agent.DoneEvent, error) {
	var done *agent.DoneEvent
	for ev := range e.SubmitGranted(ctx, "", msg, approver, grant) {
		if werr := out.event(ev); werr != nil {
			return nil, fail(ExitError, "writing the output: %v", werr)
		}
		if ev.Type == agent.EventDone {
			done = ev.Done
		}
	}
	return done, nil
}

// exitCodeOf is the exit code an error ends the command with.
func exitCodeOf(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return ExitError
}
