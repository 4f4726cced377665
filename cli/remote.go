package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/client"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tool/builtin"
)

// EnvServerToken is the variable holding the bearer token of --server
// (kept out of the command line, where other users could read it).
const EnvServerToken = "REIN_SERVER_TOKEN"

// newClient connects to the server of --server.
func (a *App) newClient(url string) (*client.Client, error) {
	c, err := client.New(url, client.Options{Token: a.getenv(EnvServerToken), UserAgent: "rein/" + Version()})
	if err != nil {
		return nil, usageErrorf("--server: %v", err)
	}
	return c, nil
}

// remoteErr turns a client error into the command's error.
func remoteErr(err error) error {
	var ce *client.Error
	if errors.As(err, &ce) && ce.Status == http.StatusUnauthorized {
		return fail(ExitError, "%v\nSet %s to a token the server accepts.", err, EnvServerToken)
	}
	return fail(ExitError, "%v", err)
}

// runRemote runs one prompt on a rein server (rein run --server URL): in a
// workspace of the server for this directory, in a new session or the one
// --resume or --continue names, with the same output formats and exit
// codes as a local run. Permission questions are asked on the terminal and
// answered over the API; without a terminal they are denied at once, as a
// local headless run denies them. Ctrl-C cancels the run on the server.
func (a *App) runRemote(cmd *cobra.Command, o *runOptions, prompt string, fromStdin bool) error {
	ctx := cmd.Context()
	c, err := a.newClient(o.server)
	if err != nil {
		return err
	}
	sid, err := a.remoteSession(ctx, c, o)
	if err != nil {
		return err
	}
	imgs, err := remoteImages(o.images)
	if err != nil {
		return usageErrorf("%v", err)
	}
	msg := api.Message{Text: prompt, Images: imgs, Model: o.model, PermissionMode: o.permissionMode, Agent: o.agent}
	if cmd.Flags().Changed("max-turns") {
		msg.MaxTurns = o.maxTurns
	}
	acc, err := c.Send(context.WithoutCancel(ctx), sid, msg)
	if err != nil {
		return remoteErr(err)
	}
	var approver permission.Approver
	if a.StdinTTY && a.StderrTTY && !fromStdin {
		approver = newLineApprover(a.Stdin, a.Stderr)
	}
	out := newSink(o.output, a.Stdout, a.Stderr, a.StderrTTY || o.verbose, a.StderrTTY && a.getenv("TERM") != "dumb", o.model)
	if ts, ok := out.(*textSink); ok {
		defer ts.spin.stop()
	}
	done, err := a.followRun(ctx, c, sid, acc.RunID, approver, out)
	if err != nil {
		return err
	}
	return finish(done, sid)
}

// followRun reads the session's events until the run's done, feeding the
// output and answering permission questions. When ctx ends (Ctrl-C), the
// run is cancelled on the server and followed to its end.
func (a *App) followRun(ctx context.Context, c *client.Client, sid, runID string, approver permission.Approver, out sink) (*agent.DoneEvent, error) {
	stream := context.WithoutCancel(ctx)
	cancelled := false
	plan := "" // the plan the run was stopped at (no terminal to approve it)
	for ev, err := range c.Events(stream, sid, 0) {
		if err != nil {
			return nil, remoteErr(err)
		}
		if !cancelled && ctx.Err() != nil {
			cancelled = true
			if _, err := c.Cancel(stream, runID); err != nil {
				fmt.Fprintf(a.Stderr, "rein: cancelling the run: %v\n", err)
			}
		}
		var e agent.Event
		if err := json.Unmarshal(ev.Data, &e); err != nil || e.RunID != runID {
			continue // another run's event, or one this rein does not know
		}
		if e.Type == agent.EventPermissionRequest && e.Permission != nil {
			if approver == nil && e.Permission.Tool == permission.ExitPlanModeTool {
				plan = a.stopAtPlan(stream, c, runID, *e.Permission)
				continue
			}
			a.answerRemote(ctx, c, runID, *e.Permission, approver)
		}
		if e.Type == agent.EventQuestion {
			a.answerQuestion(ctx, c, runID, e, approver)
		}
		if e.Type == agent.EventDone && e.Done != nil && plan != "" {
			e.Done.Reason, e.Done.Plan, e.Done.Error = agent.ReasonPlanReady, plan, ""
		}
		if werr := out.event(e); werr != nil {
			return nil, fail(ExitError, "writing the output: %v", werr)
		}
		if e.Type == agent.EventDone {
			return e.Done, nil
		}
	}
	return nil, fail(ExitError, "the event stream ended before the run did")
}

// answerRemote asks the terminal's approver, or denies without one, and
// sends the answer.
func (a *App) answerRemote(ctx context.Context, c *client.Client, runID string, p agent.PermissionEvent, approver permission.Approver) {
	ans := api.PermissionAnswer{Answer: string(permission.AnswerDeny), Message: "nobody can answer: rein run --server without a terminal"}
	if approver != nil {
		v, err := approver.Approve(ctx, permission.Prompt{Request: permission.Request{Tool: p.Tool, Input: p.Input, CallID: p.CallID},
			Reason: p.Reason})
		if err == nil {
			ans = api.PermissionAnswer{Answer: string(v.Answer), Message: v.Message}
		}
	}
	if err := c.Answer(context.WithoutCancel(ctx), runID, p.CallID, ans); err != nil {
		fmt.Fprintf(a.Stderr, "rein: answering the question of %s: %v\n", p.CallID, err)
	}
}

// answerQuestion puts the model's ask_user question to the terminal when
// the approver can ask (a builtin.Asker) and sends the answer; without a
// terminal it answers at once with no answer, so the model goes on with
// its best judgement instead of waiting out the server's timeout.
func (a *App) answerQuestion(ctx context.Context, c *client.Client, runID string, e agent.Event, approver permission.Approver) {
	var ans api.QuestionAnswer
	if asker, ok := approver.(builtin.Asker); ok {
		got, err := asker.Ask(ctx, e.Question, e.Options)
		switch {
		case err == nil:
			ans.Answer = got
		case errors.Is(err, builtin.ErrDeclined):
			ans.Declined = true
		}
	}
	if err := c.AnswerQuestion(context.WithoutCancel(ctx), runID, e.CallID, ans); err != nil {
		fmt.Fprintf(a.Stderr, "rein: answering the question of %s: %v\n", e.CallID, err)
	}
}

// remoteSession returns the session of a remote run: --resume's, the
// newest of this directory's workspace for --continue, else a new one.
func (a *App) remoteSession(ctx context.Context, c *client.Client, o *runOptions) (string, error) {
	switch {
	case o.resume != "" && o.cont:
		return "", usageErrorf("--resume and --continue exclude each other")
	case o.resume != "":
		s, err := c.Session(ctx, o.resume)
		if err != nil {
			return "", remoteErr(err)
		}
		return s.ID, nil
	}
	ws, err := a.remoteWorkspace(ctx, c, a.abs(o.cwd))
	if err != nil {
		return "", err
	}
	if o.cont {
		list, err := c.Sessions(ctx, client.SessionQuery{WorkspaceID: ws, Limit: 1})
		if err != nil {
			return "", remoteErr(err)
		}
		if len(list.Items) == 0 {
			return "", fail(ExitError, "no session to continue in %s on the server; start one without --continue", a.abs(o.cwd))
		}
		return list.Items[0].ID, nil
	}
	s, err := c.CreateSession(ctx, api.CreateSession{WorkspaceID: ws})
	if err != nil {
		return "", remoteErr(err)
	}
	return s.ID, nil
}

// remoteWorkspace returns the caller's project workspace of dir on the
// server, opening it the first time.
func (a *App) remoteWorkspace(ctx context.Context, c *client.Client, dir string) (string, error) {
	list, err := c.Workspaces(ctx)
	if err != nil {
		return "", remoteErr(err)
	}
	for _, w := range list {
		if w.Kind == string(session.WorkspaceProject) && w.Dir == dir {
			return w.ID, nil
		}
	}
	w, err := c.CreateWorkspace(ctx, api.CreateWorkspace{Kind: string(session.WorkspaceProject), Dir: dir})
	if err != nil {
		return "", remoteErr(err)
	}
	return w.ID, nil
}

// remoteSessions lists the caller's sessions on the server: those of this
// directory's workspace, or all with --all.
func (a *App) remoteSessions(ctx context.Context, c *client.Client, dir string, all bool) ([]*session.Session, error) {
	q := client.SessionQuery{}
	if !all {
		list, err := c.Workspaces(ctx)
		if err != nil {
			return nil, remoteErr(err)
		}
		q.WorkspaceID = "-" // matches nothing when the directory has no workspace
		for _, w := range list {
			if w.Dir == dir {
				q.WorkspaceID = w.ID
			}
		}
		if q.WorkspaceID == "-" {
			return nil, nil
		}
	}
	var out []*session.Session
	for {
		page, err := c.Sessions(ctx, q)
		if err != nil {
			return nil, remoteErr(err)
		}
		for _, s := range page.Items {
			out = append(out, &session.Session{ID: s.ID, Workspace: s.WorkspaceID, Title: s.Title, Preview: s.Preview,
				CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, ParentID: s.ParentID, ForkSeq: s.ForkSeq, Model: s.Model,
				Usage: s.Usage, CostUSD: s.CostUSD, Runs: s.Runs})
		}
		if page.NextCursor == "" {
			return out, nil
		}
		q.Cursor = page.NextCursor
	}
}

// remoteExport writes a session of the server in format to path, or stdout.
func (a *App) remoteExport(ctx context.Context, c *client.Client, id, format, path string) error {
	if format == "md" {
		format = "markdown"
	}
	w, closeOut, err := a.output(path)
	if err != nil {
		return err
	}
	err = c.Export(ctx, id, format, w)
	if cerr := closeOut(); err == nil {
		err = cerr
	}
	if err != nil {
		return remoteErr(fmt.Errorf("export %s: %w", id, err))
	}
	return nil
}

// serverFlag adds --server to a command.
func serverFlag(cmd *cobra.Command, url *string, persistent bool) {
	f := cmd.Flags()
	if persistent {
		f = cmd.PersistentFlags()
	}
	f.StringVar(url, "server", "", "a rein server's URL (rein serve) to work on instead of this machine; "+
		"the token, if it needs one, in "+EnvServerToken)
}

// remoteRemove deletes sessions on the server.
func (a *App) remoteRemove(ctx context.Context, ids []string) error {
	c, err := a.newClient(a.server)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := c.DeleteSession(ctx, id); err != nil {
			return remoteErr(err)
		}
		fmt.Fprintf(a.Stdout, "Deleted %s.\n", id)
	}
	return nil
}

// remoteFork forks a session on the server.
func (a *App) remoteFork(ctx context.Context, id string, at int64) error {
	c, err := a.newClient(a.server)
	if err != nil {
		return err
	}
	s, err := c.Fork(ctx, id, api.Fork{AtSeq: at})
	if err != nil {
		return remoteErr(err)
	}
	fmt.Fprintf(a.Stdout, "Forked %s into %s; go on with: rein run --server %s --resume %s \"…\"\n", id, s.ID, a.server, s.ID)
	return nil
}

// remoteShow shows a session of the server and its runs.
func (a *App) remoteShow(ctx context.Context, id string, asJSON bool) error {
	c, err := a.newClient(a.server)
	if err != nil {
		return err
	}
	s, err := c.Session(ctx, id)
	if err != nil {
		return remoteErr(err)
	}
	runs, err := c.Runs(ctx, id)
	if err != nil {
		return remoteErr(err)
	}
	if asJSON {
		return writeJSON(a.Stdout, struct {
			Session *api.Session `json:"session"`
			Runs    []api.Run    `json:"runs"`
		}{s, runs})
	}
	w := a.Stdout
	fmt.Fprintf(w, "Session    %s (on %s)\n", s.ID, a.server)
	fmt.Fprintf(w, "Updated    %s\n", s.UpdatedAt.Local().Format("2006-01-02 15:04"))
	if s.Model != "" {
		fmt.Fprintf(w, "Model      %s\n", s.Model)
	}
	fmt.Fprintf(w, "Usage      %s\n", usageLine(s.Usage.InputTokens, s.Usage.OutputTokens, s.Usage.CacheReadTokens, s.Usage.CacheWriteTokens, s.CostUSD))
	fmt.Fprintf(w, "Runs       %d\n", len(runs))
	for _, r := range runs {
		line := fmt.Sprintf("  %s  %-11s %s", r.ID, r.Status, clip(r.Prompt, 50))
		if r.Error != "" {
			line += "  (" + clip(r.Error, 60) + ")"
		}
		fmt.Fprintln(w, line)
	}
	return nil
}

// stopAtPlan ends a remote plan-mode run at its plan when no terminal can
// approve it, as a local headless run ends (SPEC PERM-7): the API's
// answers cannot say "stop", so the run is cancelled and its end reported
// as plan_ready with the plan. It returns the plan.
func (a *App) stopAtPlan(ctx context.Context, c *client.Client, runID string, p agent.PermissionEvent) string {
	if _, err := c.Cancel(ctx, runID); err != nil {
		fmt.Fprintf(a.Stderr, "rein: stopping the run at its plan: %v\n", err)
	}
	return permission.PlanOf(p.Input)
}
