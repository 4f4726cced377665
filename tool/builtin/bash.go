package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/tool"
)

// Defaults of the bash tool (SPEC TOOL-4).
const (
	BashDefaultTimeout = 120 * time.Second
	BashMaxTimeout     = 600 * time.Second
	BashOutputCap      = 30000 // characters
)

// BashOptions configures the bash tool. The zero value means the defaults.
type BashOptions struct {
	// DefaultTimeout applies when the call gives none; 0 means 120 s.
	DefaultTimeout time.Duration
	// MaxTimeout is the largest timeout a call may ask for; 0 means 600 s.
	MaxTimeout time.Duration
	// OutputCap is how many characters of output the model sees; above it the
	// whole output is saved to a file and the model gets the head, the tail
	// and the file's path. 0 means 30,000.
	OutputCap int
	// Blocklist refuses commands before they run; nil means
	// DefaultBlocklist(), an empty non-nil slice means no blocklist.
	Blocklist []BlockRule
	// AllowOutsideWorkspace lets the dir input leave the call's WorkDir.
	AllowOutsideWorkspace bool
	// Fence bounds the dir input (see [Fence]); it holds even with
	// AllowOutsideWorkspace.
	Fence Fence
	// Env, when set, returns NAME=value pairs added to this call's
	// environment; rein's own environment is never changed.
	Env func(call tool.Call) []string
	// OnStart, when set, is told the process group of each command as it
	// starts, for the session journal (SPEC SESS-1).
	OnStart func(call tool.Call, pgid int)
	// Jobs, when set, are the session's background jobs (SPEC TOOL-8): the
	// tool then takes run_in_background, and with BackgroundOnTimeout a
	// command still running at its timeout is moved there instead of
	// killed. Give the model JobTools(Jobs) too.
	Jobs *Jobs
	// BackgroundOnTimeout moves a foreground command that reaches its
	// timeout to the background (when Jobs is set and has room), except
	// sleep, git and command lines that cannot be parsed.
	BackgroundOnTimeout bool
	// MaxOutput bounds the bytes of output a command may write: past it
	// the command is stopped, the first MaxOutput bytes are saved to a file
	// and the model is told so. 0 means the backend's limit
	// (exec.DefaultMaxSpill, 64 MiB); negative means no limit.
	MaxOutput int64
	// Unsandboxed, when set, runs the calls that ask for it
	// (unsandboxed: true) outside the sandbox (SPEC TOOL-7); the
	// permission policy asks the user about every such call
	// (permission: "runs outside the sandbox"). nil refuses them.
	Unsandboxed exec.Backend
}

// The schemas of bash's input, without and with background jobs.
var (
	bashSchema    = tool.NewStaticSchema[bashIn](nil)
	bashJobSchema = tool.NewStaticSchema[bashJobIn](nil)
)

type bashIn struct {
	Command     string  `json:"command"`
	Timeout     float64 `json:"timeout,omitempty" jsonschema:"seconds (default 120, max 600)"`
	Description string  `json:"description,omitempty" jsonschema:"5-10 words, for the user"`
	Dir         string  `json:"dir,omitempty" jsonschema:"default: workspace root"`
	Unsandboxed bool    `json:"unsandboxed,omitempty" jsonschema:"asks the user"`
}

const bashDesc = "Runs a bash command; returns its combined output and exit code. A fresh shell " +
	"each call (cd does not persist; use dir). No stdin or terminal: editors, pagers, REPLs and scaffolders " +
	"without --yes are refused. Long output is cut to head and tail, the whole kept in a file."

// NewBash returns the bash tool: commands run through backend in the call's
// working directory with the limits of SPEC TOOL-4 (timeout, output cap,
// process-group kill, closed stdin, blocklist, interactive preflight,
// per-call environment).
func NewBash(backend exec.Backend, opts BashOptions) tool.Tool {
	b := &bash{backend: backend, opts: opts}
	if b.opts.DefaultTimeout <= 0 {
		b.opts.DefaultTimeout = BashDefaultTimeout
	}
	if b.opts.MaxTimeout <= 0 {
		b.opts.MaxTimeout = BashMaxTimeout
	}
	if b.opts.DefaultTimeout > b.opts.MaxTimeout {
		b.opts.DefaultTimeout = b.opts.MaxTimeout
	}
	if b.opts.OutputCap <= 0 {
		b.opts.OutputCap = BashOutputCap
	}
	if b.opts.Blocklist == nil {
		b.opts.Blocklist = DefaultBlocklist()
	}
	meta := tool.Meta{Category: tool.CategoryExecute}
	if b.opts.Jobs != nil {
		return tool.DefineStatic("bash", bashDesc+bashJobsDesc, meta, bashJobSchema, b.runJobs)
	}
	return tool.DefineStatic("bash", bashDesc, meta, bashSchema, b.run)
}

type bash struct {
	backend exec.Backend
	opts    BashOptions
}

func (b *bash) run(ctx context.Context, call tool.Call, in bashIn) (tool.Result, error) {
	cmd, res := b.prepare(ctx, call, in)
	if res != nil {
		return *res, nil
	}
	return b.runNow(ctx, call, in, cmd), nil
}

// prepare checks the input and builds the command; a non-nil result says
// why it is not run.
func (b *bash) prepare(ctx context.Context, call tool.Call, in bashIn) (exec.Command, *tool.Result) {
	if strings.TrimSpace(in.Command) == "" {
		r := tool.Errorf("command is empty: give the command line to run")
		return exec.Command{}, &r
	}
	timeout, res := b.timeout(in.Timeout)
	if res != nil {
		return exec.Command{}, res
	}
	if r, ok := b.preflight(in.Command); !ok {
		return exec.Command{}, &r
	}
	dir, res := b.dir(ctx, call, in.Dir)
	if res != nil {
		return exec.Command{}, res
	}
	cmd := exec.Command{Script: in.Command, Dir: dir, Timeout: timeout, MaxOutput: b.opts.MaxOutput}
	if b.opts.Env != nil {
		cmd.Env = b.opts.Env(call)
	}
	if b.opts.OnStart != nil {
		cmd.OnStart = func(pgid int) { b.opts.OnStart(call, pgid) }
	}
	return cmd, nil
}

// backendOf is where the call's command runs: outside the sandbox when it
// asks (unsandboxed, SPEC TOOL-7) and that is offered, else the backend.
func (b *bash) backendOf(in bashIn) (exec.Backend, *tool.Result) {
	if !in.Unsandboxed {
		return b.backend, nil
	}
	if b.opts.Unsandboxed == nil {
		r := tool.Errorf("Not run: commands cannot run outside the sandbox here (there is no sandbox to leave, or this run forbids it); run it without unsandboxed, or ask the user to run it")
		return nil, &r
	}
	return b.opts.Unsandboxed, nil
}

// runNow runs cmd in the foreground and renders what it did.
func (b *bash) runNow(ctx context.Context, call tool.Call, in bashIn, cmd exec.Command) tool.Result {
	backend, res := b.backendOf(in)
	if res != nil {
		return *res
	}
	timeout := cmd.Timeout
	out, err := backend.Run(ctx, cmd)
	if err != nil {
		r := tool.Errorf("the command could not be run: %v", err)
		r.Metadata = map[string]any{"backend": backend.Name()}
		return r
	}
	return b.result(call, in, timeout, out)
}

// timeout turns the input's seconds into a duration within the bounds.
func (b *bash) timeout(secs float64) (time.Duration, *tool.Result) {
	max := b.opts.MaxTimeout
	switch {
	case secs < 0:
		r := tool.Errorf("timeout %s s is negative; give seconds between 1 and %s, or leave it out for %s", fmtSecs(secs), fmtSecs(max.Seconds()), fmtSecs(b.opts.DefaultTimeout.Seconds()))
		return 0, &r
	case secs == 0:
		return b.opts.DefaultTimeout, nil
	case secs > max.Seconds() && b.opts.Jobs != nil:
		r := tool.Errorf("timeout %s s is above the maximum of %s s; use at most %s, or start long commands with run_in_background "+
			"and read them with job_output", fmtSecs(secs), fmtSecs(max.Seconds()), fmtSecs(max.Seconds()))
		return 0, &r
	case secs > max.Seconds():
		r := tool.Errorf("timeout %s s is above the maximum of %s s; use at most %s, or start long jobs in the background "+
			"with their output in a file (nohup CMD > out.log 2>&1 &) and check on them later", fmtSecs(secs), fmtSecs(max.Seconds()), fmtSecs(max.Seconds()))
		return 0, &r
	}
	return time.Duration(secs * float64(time.Second)), nil
}

// preflight applies the blocklist and the interactive check.
func (b *bash) preflight(command string) (tool.Result, bool) {
	cmds, _ := scanBash(command)
	if rule, hit := blocked(b.opts.Blocklist, command, cmds); hit {
		r := tool.Errorf("Not run: the command matches the blocklist rule %q, which guards against destroying the system. "+
			"Do not try to work around it; if it is really needed, ask the user to run it.", rule.Name)
		r.Metadata = map[string]any{"blocked": rule.Name}
		return r, false
	}
	for _, c := range cmds {
		if why := interactive(c); why != "" {
			r := tool.Errorf("Not run: this would hang waiting for input (stdin is closed, there is no terminal). %s", why)
			r.Metadata = map[string]any{"interactive_required": true}
			return r, false
		}
	}
	return tool.Result{}, true
}

// dir resolves the dir input against the workspace and keeps it inside
// unless AllowOutsideWorkspace.
func (b *bash) dir(ctx context.Context, call tool.Call, in string) (string, *tool.Result) {
	if in == "" {
		return call.WorkDir, nil
	}
	abs := in
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(call.WorkDir, in)
	}
	abs = filepath.Clean(abs)
	if r := b.opts.Fence.refuse(abs); r != nil {
		return "", r
	}
	fail := func(format string, args ...any) (string, *tool.Result) {
		r := tool.Errorf(format, args...)
		return "", &r
	}
	fi, err := b.backend.Stat(ctx, abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail("dir %s does not exist; create it first (mkdir -p) or leave dir out to run in the workspace root", in)
	case err != nil:
		return fail("dir %s: %v", in, err)
	case !fi.IsDir():
		return fail("dir %s is a file, not a directory", in)
	}
	if !b.opts.AllowOutsideWorkspace && call.WorkDir != "" && !insideDir(call.WorkDir, abs) {
		return fail("dir %s is outside the workspace %s; commands run inside the workspace", in, call.WorkDir)
	}
	return abs, nil
}

// insideDir reports whether p is root or below it, symlinks resolved.
func insideDir(root, p string) bool {
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return isWithin(root, p)
}

// result renders the output and the outcome for the model (SPEC TOOL-4).
func (b *bash) result(call tool.Call, in bashIn, timeout time.Duration, out exec.Output) tool.Result {
	text, path, saveErr := RenderOutput(call, out, b.opts.OutputCap, "bash-")
	var tail []string
	switch {
	case out.TimedOut:
		tail = append(tail, fmt.Sprintf("command timed out after %s s; partial output above", fmtSecs(timeout.Seconds())))
	case out.Cancelled:
		tail = append(tail, "command was cancelled; partial output above")
	case out.OutputLimited:
		tail = append(tail, fmt.Sprintf("command was stopped: its output passed the limit of %s; to keep more, "+
			"send it to a file (cmd > out.log 2>&1) and read parts of it", FormatBytes(out.OutputLimit)))
	case out.ExitCode != 0:
		tail = append(tail, fmt.Sprintf("exit code %d", out.ExitCode))
	}
	if saveErr != nil {
		tail = append(tail, fmt.Sprintf("(the whole output could not be saved: %v)", saveErr))
	}
	for _, n := range out.Notes {
		tail = append(tail, "sandbox: "+n)
	}
	if len(tail) > 0 {
		text += "\n\n" + strings.Join(tail, "\n")
	}
	meta := map[string]any{
		"exit_code":    out.ExitCode,
		"timed_out":    out.TimedOut,
		"cancelled":    out.Cancelled,
		"duration_ms":  out.Duration.Milliseconds(),
		"output_bytes": out.TotalBytes,
	}
	if path != "" {
		meta["output_path"] = path
	}
	if in.Description != "" {
		meta["description"] = in.Description
	}
	r := tool.Text(text)
	if out.OutputLimited {
		meta["output_limited"] = true
	}
	if len(out.Notes) > 0 {
		meta["sandbox_notes"] = out.Notes
	}
	r.IsError = out.TimedOut || out.Cancelled || out.OutputLimited || out.ExitCode != 0
	if !r.IsError && isCheck(in.Command) {
		meta[MetaVerified] = in.Command
	}
	r.Metadata = meta
	return r
}

// MetaVerified is the metadata key of a passed check: a command that looks
// like a test, build, lint or type-check run and exited 0. Its value is the
// command; the run loop's focus records it as a verified step (SPEC LOOP-11).
const MetaVerified = "verified"

// checkTools are programs whose run is a check by itself; checkVerbs are
// the sub-commands that make a build tool's run one.
var (
	checkTools = map[string]bool{
		"pytest": true, "tox": true, "nox": true, "jest": true, "vitest": true, "mocha": true, "tsc": true,
		"eslint": true, "ruff": true, "mypy": true, "pyright": true, "flake8": true, "pylint": true,
		"staticcheck": true, "golangci-lint": true, "govulncheck": true, "shellcheck": true, "ctest": true,
		"rspec": true, "phpunit": true, "clippy-driver": true,
	}
	checkVerbs = map[string]map[string]bool{
		"go":      {"test": true, "build": true, "vet": true},
		"cargo":   {"test": true, "build": true, "check": true, "clippy": true, "nextest": true},
		"make":    {"test": true, "check": true, "build": true, "lint": true, "vet": true, "tests": true, "ci": true, "all": true},
		"npm":     {"test": true, "t": true, "run": true},
		"pnpm":    {"test": true, "run": true, "build": true, "lint": true},
		"yarn":    {"test": true, "run": true, "build": true, "lint": true},
		"bun":     {"test": true, "run": true},
		"mvn":     {"test": true, "verify": true, "package": true, "compile": true},
		"gradle":  {"test": true, "build": true, "check": true},
		"dotnet":  {"test": true, "build": true},
		"python":  {"-m": true},
		"python3": {"-m": true},
		"uv":      {"run": true},
		"just":    {"test": true, "check": true, "build": true, "lint": true},
	}
	// runTargets are what "npm run", "python -m", "uv run" must run to
	// count as a check.
	runTargets = map[string]bool{"test": true, "tests": true, "build": true, "lint": true, "check": true,
		"typecheck": true, "pytest": true, "mypy": true, "ruff": true, "unittest": true, "tox": true, "vet": true}
)

// isCheck reports a command line one of whose commands is a check run: go
// test, cargo build, make check, npm test, pytest, … Commands joined by
// &&, ||, ; and | are looked at one by one; variable assignments, cd and
// sudo before the program are skipped.
func isCheck(command string) bool {
	f := func(r rune) bool { return r == '&' || r == '|' || r == ';' || r == '\n' || r == '(' || r == ')' }
	for _, part := range strings.FieldsFunc(command, f) {
		words := strings.Fields(part)
		for len(words) > 0 && (strings.Contains(words[0], "=") || words[0] == "sudo" || words[0] == "time" || words[0] == "env") {
			words = words[1:]
		}
		if len(words) == 0 || words[0] == "cd" {
			continue
		}
		prog := filepath.Base(words[0])
		if prog == "gradlew" {
			prog = "gradle"
		}
		if checkTools[prog] {
			return true
		}
		verbs, ok := checkVerbs[prog]
		if !ok || len(words) < 2 {
			continue
		}
		args := words[1:]
		for len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-m" { // make -j4 test, go -C dir test
			args = args[1:]
		}
		if len(args) == 0 || !verbs[args[0]] {
			continue
		}
		if args[0] == "run" || args[0] == "-m" {
			if len(args) > 1 && runTargets[strings.SplitN(args[1], ":", 2)[0]] {
				return true
			}
			continue
		}
		return true
	}
	return false
}

// fmtSecs prints seconds without a needless fraction: 120, 0.3.
func fmtSecs(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) }
