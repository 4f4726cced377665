package cli

import (
	"context"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/workspace"
)

const runLong = `Run one prompt in the workspace and print the answer.

The prompt is the argument, the -p flag, or stdin ("-", or nothing when stdin
is not a terminal). Output formats:
  text         the final answer on stdout; on a terminal (or with -v), tool
               calls and retries on stderr
  json         one object: session_id, reason, exit_code, text, usage,
               cost_usd, turns, stats, error
  stream-json  every run event as one line of JSON (docs/events.md)

Images go with the prompt: --image FILE (repeatable; PNG, JPEG, GIF or WebP,
up to 5 MiB), or a mention of an image file in the workspace, @shot.png (or
@"my shot.png"). A mention of another file stays text: the model reads it.

Without a terminal nobody can answer permission questions: a tool that asks
is denied. Allow what the run needs with --allowed-tools ("bash(go test:*)")
or --permission-mode (accept-edits, bypass).

Scripts written for claude -p work: -p/--print, --output-format
text|json|stream-json (Claude Code's result object and lines),
--input-format stream-json, --include-partial-messages, --allowedTools,
--disallowedTools, --dangerously-skip-permissions, --settings, --add-dir,
--session-id; see docs/cli.md "Claude Code's headless flags".

--model replay:PATH plays a recorded cassette (--record FILE records one): the
model, system prompt and output limit are the recording's, the tools run for
real, and a request that differs from the recording fails.

`

func (a *App) runCommand() *cobra.Command {
	o := &runOptions{}
	var dry bool
	cmd := &cobra.Command{
		Use:   "run [PROMPT]",
		Short: "Run one prompt and print the answer",
		Long:  runLong + dryRunHelp + exitCodeHelp(),
		Example: `  rein run "explain what main.go does"
  git diff | rein run - --output json
  rein run --resume 0192a… "now write the tests" --allowed-tools "bash(go test:*)"
  rein run --model replay:examples/quickstart.cassette
  rein run --image ~/Desktop/bug.png "why does @docs/layout.png look different?"
  rein run --dry-run --output json "fix the failing test"
  rein run -p --output-format json --allowedTools "Bash(go test *)" "fix the test" | jq -r .result`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.checkCC(cmd.Flags()); err != nil {
				return err
			}
			if err := a.prepareCC(o, a.Stderr); err != nil {
				return err
			}
			if dry {
				return a.dryRun(cmd, o, args)
			}
			return a.runOnce(cmd, o, args)
		},
	}
	addRunFlags(cmd, o)
	addCCFlags(cmd, o)
	cmd.Flags().BoolVar(&dry, "dry-run", false, "show readiness, the system prompt, the tools and the first request's size and cost; call no model (exit 10: not ready)")
	return cmd
}

// runOnce runs one prompt: rein run, rein -p, and rein with a prompt on stdin.
func (a *App) runOnce(cmd *cobra.Command, o *runOptions, args []string) (err error) {
	if err := o.checkOutput(); err != nil {
		return err
	}
	prompt, fromStdin, err := a.readPrompt(o, args)
	if err != nil {
		return err
	}
	if o.server != "" {
		if err := localOnly(cmd); err != nil {
			return err
		}
		if err := remoteSlash(prompt); err != nil { // slashcmd.go
			return err
		}
		if prompt == "" && len(o.images) == 0 && o.resume == "" && !o.cont {
			return usageErrorf("no prompt: give it as an argument, with -p, or on stdin (-)")
		}
		return a.runRemote(cmd, o, prompt, fromStdin)
	}
	ctx := cmd.Context()
	e, err := a.newEngine(cmd, o, a.Stderr, nil)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := e.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err := e.open(ctx, o); err != nil {
		return err
	}
	if err := o.ccBind(ctx, e); err != nil {
		return err
	}
	x, err := e.slashPrompt(ctx, prompt) // "/NAME ARGS": a custom slash command (slashcmd.go)
	if err != nil {
		return err
	}
	if x != nil {
		prompt = x.Prompt
	}
	if f := e.Model().Frame; f != nil && e.Session() == nil && f.Prompt != "" {
		switch {
		case prompt == "":
			prompt = f.Prompt // a cassette replays its own prompt
		case prompt != f.Prompt:
			return fail(ExitError, "this cassette was recorded with the prompt %q; a replay must send the same one (or none)", f.Prompt)
		}
	}
	var approver permission.Approver
	if a.StdinTTY && a.StderrTTY && !fromStdin && o.cc.inputFormat != "stream-json" {
		approver = newLineApprover(a.Stdin, a.Stderr)
	}
	if o.cc.inputFormat == "stream-json" { // Claude Code's user messages on stdin
		defer e.EndSession(context.WithoutCancel(ctx), "exit")
		return a.ccStream(ctx, e, a.ccSinkFor(o, e), approver)
	}
	msg, err := e.userMessage(prompt, o.images)
	if err != nil {
		return usageErrorf("%v", err)
	}
	e.noteNoVision(msg)
	if msg == nil && !e.Pending() {
		return usageErrorf("no prompt: give it as an argument, with -p, or on stdin (-)")
	}
	var out sink
	if o.cc.on() {
		out = a.ccSinkFor(o, e)
	} else {
		out = newSink(o.output, a.Stdout, a.Stderr, a.StderrTTY || o.verbose, a.StderrTTY && a.getenv("TERM") != "dumb", e.Model().Label)
	}
	if ts, ok := out.(*textSink); ok {
		defer ts.spin.stop()
	}
	done, err := runMessage(ctx, e, msg, approver, x.GrantOf(), out)
	if err != nil {
		return err
	}
	e.EndSession(context.WithoutCancel(ctx), "exit")
	if o.cc.on() {
		return ccFinish(done, e.SessionID())
	}
	return finish(done, e.SessionID())
}

// finish turns the end of a run into the command's result.
func finish(done *agent.DoneEvent, sessionID string) error {
	if done == nil {
		return fail(ExitError, "the run ended without a result")
	}
	code := exitCode(done.Reason)
	if code == ExitOK {
		return nil
	}
	return &exitError{code: code, msg: endMessage(done, sessionID)}
}

// readPrompt reads the prompt from the arguments, -p, or stdin ("-", or
// nothing given and stdin not a terminal).
func (a *App) readPrompt(o *runOptions, args []string) (prompt string, fromStdin bool, err error) {
	arg := strings.Join(args, " ")
	if o.cc.inputFormat == "stream-json" {
		if arg != "" || o.prompt != "" && o.prompt != "-" {
			return "", false, usageErrorf("--input-format stream-json reads the prompts from stdin: give none as an argument")
		}
		return "", true, nil
	}
	if o.prompt == "-" && arg != "" {
		o.prompt = "" // -p "…" as Claude Code's print flag: the argument is the prompt
	}
	if arg != "" && o.prompt != "" {
		return "", false, usageErrorf("give the prompt once: as an argument or with -p, not both")
	}
	if arg == "" {
		arg = o.prompt
	}
	if arg != "-" && (arg != "" || a.StdinTTY || a.Stdin == nil) {
		return arg, false, nil
	}
	b, err := io.ReadAll(a.Stdin)
	if err != nil {
		return "", false, fail(ExitError, "reading the prompt from stdin: %v", err)
	}
	return strings.TrimSpace(string(b)), true, nil
}

// open resumes the session the flags name, if any, and resolves the model.
func (e *engine) open(ctx context.Context, o *runOptions) error {
	switch {
	case o.resume != "" && o.cont:
		return usageErrorf("--resume and --continue exclude each other")
	case o.resume != "":
		if err := e.resume(ctx, o.resume, o.killOrphans); err != nil {
			return err
		}
	case o.cont:
		if err := e.continueLatest(ctx, o.killOrphans); err != nil {
			return err
		}
	}
	spec := e.ModelSpec()
	err := e.useModel(spec)
	if err != nil && spec != e.cfg.Effective.String(workspace.Model) && e.cfg.Effective.String(workspace.Model) != "" {
		e.note("the session's model %s is not available (%v); using %s", spec, err, e.cfg.Effective.String(workspace.Model))
		err = e.useModel(e.cfg.Effective.String(workspace.Model))
	}
	return err
}

// localOnly refuses, with --server, the flags that only mean something on
// this machine (the server's configuration decides them there).
func localOnly(cmd *cobra.Command) error {
	var set []string
	for _, name := range []string{"allowed-tools", "disallowed-tools", "system-prompt", "append-system-prompt",
		"record", "timeout", "kill-orphans", "cwd"} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed && name != "cwd" {
			set = append(set, "--"+name)
		}
	}
	if len(set) > 0 {
		return usageErrorf("%s: not with --server (the server's settings and its workspace's .rein/settings.yaml decide them)",
			strings.Join(set, ", "))
	}
	return nil
}
