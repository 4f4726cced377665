package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds a hook that declares no timeout.
const DefaultTimeout = 60 * time.Second

// maxOutput bounds what is kept of a hook's stdout and stderr.
const maxOutput = 1 << 20

// ErrTimeout is wrapped by the error of a hook that ran out of time.
var ErrTimeout = errors.New("hook timed out")

// ExitError is a command hook that exited with a code other than 0 and 2: a
// non-blocking failure, as in Claude Code.
type ExitError struct {
	Code   int
	Stderr string
}

// Error says the exit code and what the hook wrote on stderr.
func (e *ExitError) Error() string {
	if e.Stderr == "" {
		return fmt.Sprintf("hook exited with code %d", e.Code)
	}
	return fmt.Sprintf("hook exited with code %d: %s", e.Code, e.Stderr)
}

// Command is a hook that runs a shell command with the input as JSON on
// stdin (SPEC HOOK-3). Exit code 0 is success: stdout is read as Claude
// Code's JSON output, or as plain text that becomes context for
// user_prompt_submit and session_start. Exit code 2 blocks with stderr as the
// reason shown to the model (on stop it forces a continue). Any other code is
// an [*ExitError], a non-blocking failure. The whole process group is killed
// when the timeout expires or ctx is done.
type Command struct {
	// Command is run by bash (sh when bash is missing) with -c.
	Command string
	// Dir is the working directory; empty means the input's cwd.
	Dir string
	// ProjectDir is exported as CLAUDE_PROJECT_DIR and REIN_PROJECT_DIR;
	// empty means the input's cwd.
	ProjectDir string
	// PassEnv names the variables passed from rein's environment on top
	// of [BaseEnv]: nothing else of it reaches the command (no provider
	// keys, no tokens) unless named here.
	PassEnv []string
	// Getenv reads rein's environment; nil reads the process's.
	Getenv func(string) string
	// Env adds KEY=value pairs; they win over the variables above.
	Env []string
	// Timeout bounds the run; zero means [DefaultTimeout].
	Timeout time.Duration
	// Claude sends Claude Code's event and tool names (PreToolUse, Bash), for
	// scripts written for Claude Code.
	Claude bool
}

var shellPath = sync.OnceValue(func() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/sh"
})

// Run runs the command once.
func (c *Command) Run(ctx context.Context, in Input) (Outcome, error) {
	payload, err := encodeInput(in, c.Claude)
	if err != nil {
		return Outcome{}, err
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, shellPath(), "-c", c.Command)
	cmd.Dir = firstNonEmpty(c.Dir, in.CWD)
	project := firstNonEmpty(c.ProjectDir, in.CWD)
	cmd.Env = CleanEnv(c.Getenv, c.PassEnv, "CLAUDE_PROJECT_DIR="+project, "REIN_PROJECT_DIR="+project,
		"REIN_HOOK_EVENT="+string(in.Event))
	cmd.Env = append(cmd.Env, c.Env...)
	cmd.Stdin = bytes.NewReader(payload)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	setProcessGroup(cmd)
	cmd.WaitDelay = 2 * time.Second

	err = cmd.Run()
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(cerr, context.DeadlineExceeded) {
			return Outcome{}, fmt.Errorf("%w: %s", ErrTimeout, c.Command)
		}
		return Outcome{}, cerr
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		o, err := parseOutput(in.Event, stdout.Bytes())
		return fixInput(o, c.Claude, in), err
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		// Exit 2 blocks even when the JSON says allow; the JSON's reason,
		// if it gives one, else stderr, says why.
		o, _ := validJSON(in.Event, stdout.Bytes())
		reason := firstNonEmpty(o.Reason, strings.TrimSpace(stderr.String()))
		if reason == "" {
			reason = "blocked by hook: " + c.Command
		}
		o.UpdatedInput, o.Permission = nil, ""
		return block(in.Event, o, reason), nil
	case errors.As(err, &exit):
		// Any other code is a non-blocking error, unless stdout is valid
		// JSON output: then the JSON decides (Claude Code's rule).
		if o, ok := validJSON(in.Event, stdout.Bytes()); ok {
			return fixInput(o, c.Claude, in), nil
		}
		return Outcome{}, &ExitError{Code: exit.ExitCode(), Stderr: strings.TrimSpace(stderr.String())}
	}
	return Outcome{}, fmt.Errorf("hook: run %q: %w", c.Command, err)
}

// encodeInput marshals the input, in Claude Code's dialect when asked
// (see claude.go). Fields Claude Code sends on every call of an event go
// even when empty or false (transcript_path, stop_hook_active,
// custom_instructions), so a script may rely on them.
func encodeInput(in Input, claude bool) ([]byte, error) {
	sent := in
	if claude {
		sent = claudeInput(in)
	}
	b, err := json.Marshal(sent)
	if err != nil {
		return nil, fmt.Errorf("hook: encode input: %w", err)
	}
	var always map[string]any
	switch in.Event {
	case Stop, SubagentStop:
		always = map[string]any{"stop_hook_active": in.StopHookActive}
	case PreCompact:
		always = map[string]any{"custom_instructions": in.CustomInstructions}
	}
	if in.TranscriptPath == "" {
		if always == nil {
			always = map[string]any{}
		}
		always["transcript_path"] = ""
	}
	if always == nil {
		return b, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("hook: encode input: %w", err)
	}
	for k, v := range always {
		if _, has := m[k]; !has {
			m[k], _ = json.Marshal(v)
		}
	}
	if b, err = json.Marshal(m); err != nil {
		return nil, fmt.Errorf("hook: encode input: %w", err)
	}
	return b, nil
}

// fixInput maps an updated tool input back from Claude Code's dialect.
func fixInput(o Outcome, claude bool, in Input) Outcome {
	if claude && len(o.UpdatedInput) > 0 && in.ToolName != "" {
		o.UpdatedInput = reinToolInput(in.ToolName, o.UpdatedInput)
	}
	return o
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// capped is a buffer that keeps the first maxOutput bytes and drops the rest.
type capped struct {
	b []byte
}

// Write keeps what fits and reports everything written.
func (c *capped) Write(p []byte) (int, error) {
	if room := maxOutput - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// Bytes returns what was kept.
func (c *capped) Bytes() []byte { return c.b }

// String returns what was kept.
func (c *capped) String() string { return string(c.b) }
