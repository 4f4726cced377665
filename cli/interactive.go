package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/fileindex"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tokens"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/builtin"
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
		AskTimeout: e.Policy().AskTimeout(), History: hist.load(), OnSubmit: hist.add, Files: e.fileIndex()})
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

// What only the terminal UI asks of the engine, its backend (SPEC CLI-6).
var (
	_ tui.SkillLister     = (*engine)(nil)
	_ tui.ContextReporter = (*engine)(nil)
	_ tui.ShellRunner     = (*engine)(nil)
	_ tui.ExcerptReader   = (*engine)(nil)
	_ tui.Transcripter    = (*engine)(nil)
	_ tui.SessionPicker   = (*engine)(nil)
)

// Transcript implements tui.Transcripter: the conversation so far.
func (e *engine) Transcript() []llm.Message { return e.History() }

// SessionList implements tui.SessionPicker: the workspace's sessions,
// newest first (SPEC SESS-3).
func (e *engine) SessionList(ctx context.Context) ([]tui.SessionInfo, error) {
	list, err := listAll(ctx, e.store, e.Workspace().Root)
	if err != nil {
		return nil, err
	}
	out := make([]tui.SessionInfo, len(list))
	for i, s := range list {
		out[i] = tui.SessionInfo{ID: s.ID, Title: s.Title, Preview: s.Preview, Model: s.Model, Updated: s.UpdatedAt,
			CostUSD: s.CostUSD}
	}
	return out, nil
}

// SessionPreview implements tui.SessionPicker: a session's conversation,
// loaded (and healed in memory) without binding it.
func (e *engine) SessionPreview(ctx context.Context, id string) ([]llm.Message, error) {
	st, err := session.Load(ctx, e.store, id)
	if err != nil {
		return nil, err
	}
	return st.Messages, nil
}

// maxExcerptLines and maxExcerptFile bound what an @file#20-45 mention
// puts in a prompt.
const (
	maxExcerptLines = 2000
	maxExcerptFile  = 16 << 20
)

// Excerpt implements tui.ExcerptReader: the lines r of a file of the
// workspace, numbered. The permission policy must allow read_file on it
// without asking (a sensitive file, a deny rule, a path outside the
// workspace are refused), and it must stay inside the workspace once
// symbolic links are followed.
func (e *engine) Excerpt(ctx context.Context, p string, r fileindex.Range) (string, error) {
	if err := e.ensureSession(ctx); err != nil { // the tools' declared behaviour
		return "", err
	}
	root := e.Workspace().Root
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, p)
	}
	abs = filepath.Clean(abs)
	input, err := json.Marshal(map[string]string{"path": abs})
	if err != nil {
		return "", err
	}
	req := permission.Request{Tool: "read_file", Input: input, WorkDir: root, SessionID: e.SessionID()}
	if set := e.Tools(); set != nil {
		if entry, ok := set.Get("read_file"); ok {
			req.Origin, req.Meta = entry.Origin, entry.Meta
		}
	}
	out, err := e.Policy().Decide(ctx, req)
	if err != nil {
		return "", err
	}
	if out.Decision != permission.DecisionAllow {
		return "", fmt.Errorf("the permission policy does not let the model read it freely (%s); mention it without # and the model asks", out.Reason)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("no such file in the workspace %s", root)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(realRoot, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("it leads outside the workspace %s: refused", root)
	}
	fi, err := os.Stat(real)
	switch {
	case err != nil:
		return "", err
	case !fi.Mode().IsRegular():
		return "", errors.New("not a regular file")
	case fi.Size() > maxExcerptFile:
		return "", fmt.Errorf("the file is %d MiB, over the %d MiB an excerpt reads", fi.Size()>>20, maxExcerptFile>>20)
	}
	data, err := os.ReadFile(real)
	if err != nil {
		return "", err
	}
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return "", errors.New("a binary file has no lines to quote")
	}
	cut := false
	if r.End-r.Start+1 > maxExcerptLines {
		r.End, cut = r.Start+maxExcerptLines-1, true
	}
	text, all := fileindex.Lines(string(data), r)
	if text == "" {
		return "", fmt.Errorf("the file has fewer than %d lines", r.Start)
	}
	if cut || !all {
		text += fmt.Sprintf("(the excerpt ends at line %d: the file ends there, or %d lines is the most quoted)\n", r.Start+strings.Count(text, "\n")-1, maxExcerptLines)
	}
	return text, nil
}

// ensureSession creates the session when none is bound yet: the tools
// are bound with it. The prompt that follows would create it anyway.
func (e *engine) ensureSession(ctx context.Context) error {
	if e.Session() != nil {
		return nil
	}
	return e.Create(ctx, &session.Session{})
}

// shellSeq numbers the user's ! commands of a process, for their call ids.
var shellSeq atomic.Int64

// Shell implements tui.ShellRunner: the user's ! command runs through the
// session's bash tool — its sandbox, timeout and output limits — after
// the permission policy: a deny (a rule, plan mode's protections) refuses
// it; ask and allow run it, the user having typed it. A new session is
// created when none is bound yet, as the bash tool needs one.
func (e *engine) Shell(ctx context.Context, command string) (tui.ShellResult, error) {
	if err := e.ensureSession(ctx); err != nil {
		return tui.ShellResult{}, err
	}
	set := e.Tools()
	if set == nil {
		return tui.ShellResult{}, errors.New("this session runs without tools, so ! runs nothing")
	}
	entry, ok := set.Get("bash")
	if !ok {
		return tui.ShellResult{}, errors.New("the bash tool is off in this session (--disallowed-tools or the agent's tools), so ! runs nothing")
	}
	input, err := json.Marshal(map[string]string{"command": command})
	if err != nil {
		return tui.ShellResult{}, err
	}
	sid := e.SessionID()
	id := fmt.Sprintf("user_shell_%d", shellSeq.Add(1))
	sessDir := filepath.Join(e.store.Dir(), sid)
	root := e.Workspace().Root
	out, err := e.Policy().Decide(ctx, permission.Request{Tool: "bash", Origin: entry.Origin, Input: input, Meta: entry.Meta,
		WorkDir: root, SessionDir: sessDir, SessionID: sid, CallID: id})
	if err != nil {
		return tui.ShellResult{}, err
	}
	if out.Decision == permission.DecisionDeny {
		return tui.ShellResult{}, fmt.Errorf("refused by the permission policy: %s", out.Reason)
	}
	if s, err := e.checkpoints(); err == nil {
		_ = s.NoteShell(command) // its effects cannot be rewound
	}
	res, err := entry.Tool.Run(ctx, tool.Call{ID: id, Name: "bash", Input: input, SessionID: sid, WorkDir: root, SessionDir: sessDir})
	if err != nil {
		return tui.ShellResult{}, err
	}
	return tui.ShellResult{Output: res.TextOf(), Failed: res.IsError}, nil
}

// Skills implements tui.SkillLister: the skills that apply, for the / menu.
func (e *engine) Skills() []tui.MenuEntry {
	defs := e.cfg.Definitions().Skills
	out := make([]tui.MenuEntry, 0, len(defs))
	for _, s := range defs {
		out = append(out, tui.MenuEntry{Name: s.Name, Description: s.Description, Kind: tui.KindSkill})
	}
	return out
}

// Context implements tui.ContextReporter: the conversation's size, an
// estimate from its messages (the status line shows the exact figure once
// a reply reports it), and the model's context window.
func (e *engine) Context() (used, window int64) {
	for _, m := range e.History() {
		if b, err := json.Marshal(m); err == nil {
			used += int64(tokens.EstimateBytes(b))
		}
	}
	return used, int64(e.Model().Caps.ContextWindow)
}

// fileIndex is the workspace's file index for the @ picker: the
// .gitignore files are honoured, as the knowledge base's walk does.
func (e *engine) fileIndex() *fileindex.Index {
	root := e.Workspace().Root
	return fileindex.New(fileindex.Options{Root: root, Ignore: builtin.IgnoreFunc(root)})
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
