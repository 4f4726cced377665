// Package action projects a workspace action (SPEC ACTION-1: an
// ACTION.yaml with a name, a description, an input schema and a command) to
// the model as a tool.
//
// The command runs through an [exec.Backend], so the sandbox applies, with
// the workspace as its working directory. The model's input never becomes
// part of the command line or the script: it reaches the command as data,
// in environment variables and a file (see [New]), so no input can inject
// shell code. The output is rendered as the bash tool renders it: exit
// code, combined output, and above a cap a head-and-tail preview with the
// whole output saved to a file.
package action

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool"
)

// Defaults and limits of an action's run.
const (
	// DefaultTimeout applies when Action.Timeout is 0.
	DefaultTimeout = 10 * time.Minute
	// OutputCap is how many characters of output the model sees; above it
	// the whole output is saved to a file and the model gets head and tail.
	OutputCap = 30_000
	// MaxEnvValue bounds the input carried in one environment variable
	// (REIN_INPUT, REIN_INPUT_<NAME>): a longer value is left out, and the
	// command reads the input from REIN_INPUT_FILE.
	MaxEnvValue = 64 << 10
)

// The environment variables an action's command gets.
const (
	EnvInput     = "REIN_INPUT"       // the input, compact JSON (when at most MaxEnvValue bytes)
	EnvInputFile = "REIN_INPUT_FILE"  // a file holding the input JSON, always
	EnvPrefix    = "REIN_INPUT_"      // + UPPER_SNAKE name of each top-level scalar property
	EnvActionDir = "REIN_ACTION_DIR"  // the action's directory
	EnvAction    = "REIN_ACTION_NAME" // the action's name
)

// Action is one workspace action, as the runner reads it from ACTION.yaml.
type Action struct {
	// Name is the tool's name: letters, digits, '_' and '-', at most 64.
	Name string
	// Description tells the model what the action does and when to use it.
	Description string
	// InputSchema is the JSON Schema of the input, an object schema; the
	// tool.Set validates input against it before Run. Empty means an object
	// with any properties.
	InputSchema json.RawMessage
	// Args is the command as an argument vector, Args[0] looked up in PATH
	// (relative paths resolve from the workspace; the action's own files are
	// under REIN_ACTION_DIR). Exactly one of Args and Script is set.
	Args []string
	// Script is run by bash -c; it reads its input from the environment
	// ("$REIN_INPUT_NAME", "$REIN_INPUT_FILE"), never from its own text.
	Script string
	// Dir is the action's directory, given to the command as
	// REIN_ACTION_DIR; the command runs in the workspace (Call.WorkDir).
	Dir string
	// Timeout ends the command; 0 means DefaultTimeout.
	Timeout time.Duration
	// Env holds extra KEY=VALUE pairs the runner gives (REIN_AGENT_DEPTH,
	// variables the user's settings pass to actions).
	Env []string
}

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })

// New returns the action as a tool named a.Name, run through backend.
//
// The command gets the input as data: the input JSON in REIN_INPUT (when it
// is at most [MaxEnvValue] bytes) and in a file named by REIN_INPUT_FILE
// (in Call.SessionDir, else os.TempDir()/rein; removed once the command
// ends), and each top-level string, number or boolean property as
// REIN_INPUT_<NAME>, NAME the property's name in UPPER_SNAKE case (dryRun
// and dry-run give REIN_INPUT_DRY_RUN; the first in sorted order wins a
// clash; REIN_INPUT_FILE is always the file). REIN_ACTION_DIR and
// REIN_ACTION_NAME say which action runs. Input never reaches the command
// line.
//
// The result holds the combined output, cut to a head-and-tail preview
// with the whole output saved to a file above [OutputCap] characters; a
// non-zero exit, a timeout or a cancel is an error result naming it. Its
// metadata has exit_code, duration_ms, output_path (when saved) and more.
// The tool is not read-only, not concurrency-safe, of
// [tool.CategoryExecute].
func New(a Action, backend exec.Backend) (tool.Tool, error) {
	switch {
	case !nameRE().MatchString(a.Name):
		return nil, fmt.Errorf("action %q: the name must be 1 to 64 letters, digits, _ or -", a.Name)
	case backend == nil:
		return nil, fmt.Errorf("action %s: no execution backend", a.Name)
	case a.Script != "" && len(a.Args) > 0:
		return nil, fmt.Errorf("action %s: both a script and an argument vector; give one", a.Name)
	case strings.TrimSpace(a.Script) == "" && len(a.Args) == 0:
		return nil, fmt.Errorf("action %s: no command", a.Name)
	case len(a.Args) > 0 && a.Args[0] == "":
		return nil, fmt.Errorf("action %s: the command's program is empty", a.Name)
	}
	schema, err := objectSchema(a.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("action %s: %w", a.Name, err)
	}
	desc := strings.TrimSpace(a.Description)
	if desc == "" {
		desc = "Runs the workspace action " + a.Name + "."
	}
	if a.Timeout <= 0 {
		a.Timeout = DefaultTimeout
	}
	a.Args, a.Env = slices.Clone(a.Args), slices.Clone(a.Env)
	return &actionTool{a: a, backend: backend, spec: llm.ToolSpec{Name: a.Name, Description: desc, InputSchema: schema}}, nil
}

// objectSchema checks an input schema: it compiles and describes an
// object. Empty gives {"type":"object"}.
func objectSchema(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	if _, err := tool.CompileSchema(raw); err != nil {
		return nil, err
	}
	var top struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	if top.Type != nil && top.Type != "object" {
		return nil, fmt.Errorf("input schema: the type must be object, not %v", top.Type)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	return b.Bytes(), nil
}

type actionTool struct {
	a       Action
	backend exec.Backend
	spec    llm.ToolSpec
}

// Spec implements tool.Tool.
func (t *actionTool) Spec() llm.ToolSpec { return t.spec }

// Meta implements tool.MetaTool: an action runs a command.
func (t *actionTool) Meta() tool.Meta { return tool.Meta{Category: tool.CategoryExecute} }

// Run implements tool.Tool.
func (t *actionTool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	input, props, err := decodeInput(call.Input)
	if err != nil {
		return tool.Errorf("invalid input for %s: %v", t.a.Name, err), nil
	}
	file, cleanup, err := writeInput(call, input)
	if err != nil {
		return tool.Errorf("action %s: the input could not be written to a file: %v", t.a.Name, err), nil
	}
	defer cleanup()
	cmd := exec.Command{Dir: call.WorkDir, Timeout: t.a.Timeout, Env: t.env(input, props, file)}
	if cmd.Dir == "" {
		cmd.Dir = t.a.Dir
	}
	if t.a.Script != "" {
		cmd.Script = t.a.Script
	} else {
		cmd.Args = slices.Clone(t.a.Args)
	}
	out, err := t.backend.Run(ctx, cmd)
	if err != nil {
		return t.notRun(err), nil
	}
	return t.result(call, out), nil
}

// env builds the command's extra environment: the runner's, then the
// input's properties, then the fixed variables, which win.
func (t *actionTool) env(input []byte, props map[string]any, file string) []string {
	env := slices.Clone(t.a.Env)
	env = append(env, propertyEnv(props)...)
	env = append(env, EnvActionDir+"="+t.a.Dir, EnvAction+"="+t.a.Name)
	if len(input) <= MaxEnvValue {
		env = append(env, EnvInput+"="+string(input))
	}
	return append(env, EnvInputFile+"="+file)
}

// notRun is the result when the backend could not start the command.
func (t *actionTool) notRun(err error) tool.Result {
	msg := fmt.Sprintf("action %s could not be run: %v", t.a.Name, err)
	switch {
	case errors.Is(err, osexec.ErrNotFound):
		prog := ""
		if len(t.a.Args) > 0 {
			prog = t.a.Args[0]
		}
		msg += fmt.Sprintf("\nThe program %q was not found: its interpreter or tool is not installed, or not in PATH. "+
			"Tell the user; the action cannot run until it is installed.", prog)
	case errors.Is(err, os.ErrPermission):
		msg += "\nThe program is not executable (chmod +x), or its interpreter cannot be run."
	}
	r := tool.Errorf("%s", msg)
	r.Metadata = map[string]any{"action": t.a.Name, "backend": t.backend.Name()}
	return r
}

// writeInput saves the input JSON to a file of its own, for
// REIN_INPUT_FILE, and returns how to remove it.
func writeInput(call tool.Call, input []byte) (string, func(), error) {
	dir := call.SessionDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "rein")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, err
	}
	f, err := os.CreateTemp(dir, "action-input-*.json")
	if err != nil {
		return "", nil, err
	}
	name := f.Name()
	cleanup := func() { os.Remove(name) }
	if _, err := f.Write(input); err != nil {
		f.Close()
		cleanup()
		return "", nil, err
	}
	if err := f.Close(); err != nil {
		cleanup()
		return "", nil, err
	}
	return name, cleanup, nil
}
