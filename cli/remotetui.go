package cli

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/client"
	"github.com/reinhq/rein/permission"
)

// remoteBackend is the terminal UI's backend for a session on a rein
// server (rein --server URL, SPEC CLI-2, API-1): each prompt is a run of
// the server's session for this directory — a new one, or the one
// --resume or --continue names — its events shown as a local run's, its
// permission questions asked in the terminal UI and answered over the
// API. Ctrl-C cancels the run on the server.
type remoteBackend struct {
	a   *App
	c   *client.Client
	o   runOptions
	dir string
	sid string // the session, once the first prompt made or found it
}

// Submit implements tui.Backend.
func (b *remoteBackend) Submit(ctx context.Context, p tui.Prompt, approver permission.Approver) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		if b.sid == "" {
			sid, err := b.a.remoteSession(ctx, b.c, &b.o)
			if err != nil {
				yield(agent.Event{}, err)
				return
			}
			b.sid = sid
		}
		imgs, err := remoteImages(p.Images)
		if err != nil {
			yield(agent.Event{}, err)
			return
		}
		acc, err := b.c.Send(context.WithoutCancel(ctx), b.sid, api.Message{Text: p.Text, Images: imgs, Model: b.o.model,
			PermissionMode: b.o.permissionMode, Agent: b.o.agent})
		if err != nil {
			yield(agent.Event{}, remoteErr(err))
			return
		}
		out := &yieldSink{yield: yield}
		if _, err := b.a.followRun(ctx, b.c, b.sid, acc.RunID, approver, out); err != nil && !out.stopped {
			yield(agent.Event{}, err)
		}
	}
}

// Command implements tui.Backend: /clear starts a new session on the
// server and /cost shows the session's totals; the others act on this
// machine's configuration and are not offered for a server's session.
func (b *remoteBackend) Command(ctx context.Context, name, _ string) (string, error) {
	switch name {
	case "clear":
		b.sid, b.o.resume, b.o.cont = "", "", false
		return "The next prompt starts a new session on the server.", nil
	case "cost":
		if b.sid == "" {
			return "No run yet in this session.", nil
		}
		s, err := b.c.Session(ctx, b.sid)
		if err != nil {
			return "", remoteErr(err)
		}
		return fmt.Sprintf("Session %s: %d input and %d output tokens, $%.4f.", s.ID, s.Usage.InputTokens, s.Usage.OutputTokens, s.CostUSD), nil
	}
	return "", fmt.Errorf("/%s acts on this machine and is not available in a session on a server (%s); rein sessions --server lists its sessions", name, b.o.server)
}

// Info implements tui.Backend.
func (b *remoteBackend) Info() tui.Info {
	model := b.o.model
	if model == "" {
		model = "the server's default"
	}
	return tui.Info{Model: model, SessionID: b.sid, WorkDir: b.dir + " on " + b.o.server, PermissionMode: b.o.permissionMode}
}

// yieldSink passes a run's events to an iterator's yield; stopped says
// the consumer stopped reading.
type yieldSink struct {
	yield   func(agent.Event, error) bool
	stopped bool
}

func (s *yieldSink) event(ev agent.Event) error {
	if !s.yield(ev, nil) {
		s.stopped = true
		return errStopped
	}
	return nil
}

// errStopped ends following a run whose consumer stopped reading.
var errStopped = errors.New("the terminal UI stopped reading the run")

// interactiveRemote runs the terminal UI on a server's session.
func (a *App) interactiveRemote(ctx context.Context, o *runOptions) error {
	c, err := a.newClient(o.server)
	if err != nil {
		return err
	}
	run := a.Interactive
	if run == nil {
		run = tui.Run
	}
	b := &remoteBackend{a: a, c: c, o: *o, dir: a.abs(o.cwd)}
	err = run(ctx, tui.Options{Backend: b, In: a.Stdin, Out: a.Stdout, NoColor: a.noColor(a.StdoutTTY)})
	if b.sid != "" {
		fmt.Fprintf(a.Stderr, "rein: session %s is on %s; go on with: rein --server %s --resume %s\n", b.sid, o.server, o.server, b.sid)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return fail(ExitError, "%v", err)
	}
	return nil
}
