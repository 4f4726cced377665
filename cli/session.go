package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/session"
)

// resume opens session id (a unique prefix will do) for writing: it takes
// its lock, loads and heals it, says what healing fixed, and reports
// processes that interrupted calls left running — stopping them when
// killOrphans is set.
func (e *engine) resume(ctx context.Context, id string, killOrphans bool) error {
	id, err := resolveID(ctx, e.store, id)
	if err != nil {
		return err
	}
	if id == e.SessionID() {
		return fail(ExitError, "session %s is the current one", id)
	}
	st, err := e.Resume(ctx, id)
	if errors.Is(err, session.ErrLocked) {
		return fail(ExitError, "%v; or fork it: rein sessions fork %s", err, id)
	}
	if err != nil {
		return failErr(err)
	}
	if !st.Heal.Empty() {
		e.note("session %s was healed on load: %s", id, st.Heal.String())
	}
	e.reportPending(ctx, id, st.Pending, killOrphans)
	if err := e.Resumed(ctx, st); err != nil {
		return fail(ExitError, "%v", err)
	}
	return nil
}

// continueLatest resumes the newest session of the workspace.
func (e *engine) continueLatest(ctx context.Context, killOrphans bool) error {
	s, err := session.ContinueLatest(ctx, e.store, e.Workspace().Root)
	if errors.Is(err, session.ErrNotFound) {
		return fail(ExitError, "no session to continue in %s; start one without --continue", e.Workspace().Root)
	}
	if err != nil {
		return failErr(err)
	}
	return e.resume(ctx, s.ID, killOrphans)
}

// reportPending tells the user about processes interrupted calls left
// running, and stops them when asked to.
func (e *engine) reportPending(ctx context.Context, id string, pending []session.PendingCall, kill bool) {
	alive := alivePending(pending)
	if len(alive) == 0 {
		return
	}
	if kill {
		stopped, err := stopOrphans(ctx, pending)
		if err != nil {
			e.note("%v", err)
			return
		}
		e.note("stopped %d process group(s) left running by interrupted tool calls: %s", len(stopped), pgidList(stopped))
		return
	}
	e.note("interrupted tool calls of session %s left processes running: %s", id, pgidList(alive))
	if e.app.StdinTTY && e.app.StderrTTY && e.notice == e.app.Stderr {
		fmt.Fprint(e.notice, "Stop them now? [y/N] ")
		if ans := strings.ToLower(readLineRaw(e.app.Stdin)); ans == "y" || ans == "yes" {
			e.reportPending(ctx, id, pending, true)
			return
		}
	}
	var kills []string
	for _, p := range alive {
		kills = append(kills, fmt.Sprintf("kill -TERM -- -%d", p.PGID))
	}
	e.note("stop them with: %s (or resume with --kill-orphans)", strings.Join(kills, "; "))
}

// readLineRaw reads one line a byte at a time, so nothing after it is
// consumed from r (the terminal UI reads the rest).
func readLineRaw(r io.Reader) string {
	var b []byte
	one := make([]byte, 1)
	for {
		n, err := r.Read(one)
		if n == 1 && one[0] != '\n' {
			b = append(b, one[0])
		}
		if err != nil || (n == 1 && one[0] == '\n') {
			return strings.TrimSpace(string(b))
		}
	}
}

// stopOrphans stops the process groups interrupted calls left running,
// marking those calls Stopped in pending (a loaded state's, so its Recheck
// tells the model rein stopped them), and returns them (none: nothing ran).
func stopOrphans(ctx context.Context, pending []session.PendingCall) ([]session.PendingCall, error) {
	if len(alivePending(pending)) == 0 {
		return nil, nil
	}
	if err := session.StopPending(ctx, pending); err != nil {
		return nil, fmt.Errorf("stopping left-over processes: %w", err)
	}
	var stopped []session.PendingCall
	for _, p := range pending {
		if p.Stopped {
			stopped = append(stopped, p)
		}
	}
	return stopped, nil
}

func alivePending(pending []session.PendingCall) []session.PendingCall {
	var out []session.PendingCall
	for _, p := range pending {
		if p.Alive {
			out = append(out, p)
		}
	}
	return out
}

func pgidList(ps []session.PendingCall) string {
	parts := make([]string, 0, len(ps))
	for _, p := range ps {
		parts = append(parts, fmt.Sprintf("pgid %d (%s %s)", p.PGID, p.Tool, clip(inputSummary(p.Input), 60)))
	}
	return strings.Join(parts, ", ")
}

// resolveID finds the session an id or a unique id prefix names.
func resolveID(ctx context.Context, store session.Store, id string) (string, error) {
	if _, err := store.Get(ctx, id); err == nil {
		return id, nil
	} else if !errors.Is(err, session.ErrNotFound) && !errors.Is(err, session.ErrInvalid) {
		return "", failErr(err)
	}
	all, err := listAll(ctx, store, "")
	if err != nil {
		return "", err
	}
	var hits []string
	for _, s := range all {
		if strings.HasPrefix(s.ID, id) {
			hits = append(hits, s.ID)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return "", fail(ExitError, "no session %q; rein sessions list shows them", id)
	}
	sort.Strings(hits)
	return "", fail(ExitError, "%q names %d sessions (%s); give more of the id", id, len(hits), strings.Join(hits, ", "))
}

// listAll lists every session (of workDir, when set), newest first.
func listAll(ctx context.Context, store session.Store, workDir string) ([]*session.Session, error) {
	var out []*session.Session
	cursor := ""
	for {
		page, next, err := store.List(ctx, session.ListOptions{WorkDir: workDir, Cursor: cursor})
		if err != nil {
			return nil, failErr(err)
		}
		out = append(out, page...)
		if next == "" {
			return out, nil
		}
		cursor = next
	}
}

// inputSummary is a tool input in a few words: its main argument (a
// command, a path, a pattern; see tui.PrimaryArg), else the JSON.
func inputSummary(input json.RawMessage) string {
	if s := tui.PrimaryArg(input); s != "" {
		return s
	}
	if len(input) == 0 || string(input) == "{}" {
		return ""
	}
	return string(input)
}

// clip cuts s to n characters on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
