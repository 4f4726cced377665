package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/workspace"
)

// interactive is rein alone: the terminal UI on a terminal, a one-shot run
// of the prompt on stdin otherwise, and rein -p runs its prompt once.
func (a *App) interactive(cmd *cobra.Command, o *runOptions) (err error) {
	if o.prompt != "" || !a.StdinTTY {
		return a.runOnce(cmd, o, nil)
	}
	if o.server != "" {
		return a.interactiveRemote(cmd.Context(), o)
	}
	if len(o.images) > 0 {
		return usageErrorf("--image goes with a prompt (rein -p \"…\" --image FILE); in the terminal UI, drop or paste the image file into the input box")
	}
	ctx := cmd.Context()
	e, err := a.newEngine(cmd, o, a.Stderr, a.askTrust)
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
	logf, lerr := os.OpenFile(filepath.Join(e.cfg.Paths.DataDir, "rein.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if lerr == nil {
		defer logf.Close()
		e.logOut.set(logf)
		e.notice = logf
		defer e.logOut.set(a.Stderr)
	}
	hist := &history{path: filepath.Join(e.cfg.Paths.DataDir, "history.jsonl")}
	run := a.Interactive
	if run == nil {
		run = tui.Run
	}
	err = run(ctx, tui.Options{Backend: e, In: a.Stdin, Out: a.Stdout, NoColor: a.noColor(a.StdoutTTY),
		AskTimeout: e.Policy().AskTimeout(), History: hist.load(), OnSubmit: hist.add})
	e.EndSession(context.WithoutCancel(ctx), "prompt_input_exit")
	if id := e.SessionID(); id != "" {
		e.notice = a.Stderr
		e.note("session %s saved; go on with: rein --resume %s", id, id)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return fail(ExitError, "%v", err)
	}
	return nil
}

// history is the prompt history of the interactive session: one JSON
// string a line, the newest last, at most historyMax kept.
type history struct {
	path string
}

const historyMax = 1000

// load reads the history; a file grown past twice the cap is cut back.
func (h *history) load() []string {
	f, err := os.Open(h.path)
	if err != nil {
		return nil
	}
	var out []string
	var raw [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			out = append(out, s)
			raw = append(raw, append(append([]byte(nil), sc.Bytes()...), '\n'))
		}
	}
	f.Close()
	if len(out) > historyMax {
		out = out[len(out)-historyMax:]
		if len(raw) > 2*historyMax {
			_ = workspace.WriteFileAtomic(h.path, bytes.Join(raw[len(raw)-historyMax:], nil), 0o600)
		}
	}
	return out
}

// add appends a line; it is called from the UI goroutine, and a write of
// a few bytes does not block it.
func (h *history) add(line string) {
	b, err := json.Marshal(line)
	if err != nil || line == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(h.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	f.Write(append(b, '\n'))
	f.Close()
}
