package action

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/tool"
)

const schema = `{"type":"object","properties":{"name":{"type":"string"},"count":{"type":"integer"},
	"dryRun":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}},"msg":{"type":"string"}},
	"required":["name"]}`

// call runs an action through a tool.Set, as the run loop does: the input
// is validated against the schema first.
func call(t *testing.T, a Action, backend exec.Backend, input string) (tool.Result, tool.Call) {
	t.Helper()
	tl, err := New(a, backend)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tool.NewSet(tool.OriginAction, tl)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := set.Get(a.Name)
	if err := e.Schema.Validate(json.RawMessage(input)); err != nil {
		t.Fatalf("input %s rejected: %v", input, err)
	}
	c := tool.Call{ID: "call_1", Name: a.Name, Input: json.RawMessage(input), WorkDir: t.TempDir(), SessionDir: t.TempDir()}
	r, err := tl.Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return r, c
}

func TestNewChecks_ACTION1(t *testing.T) {
	local := &exec.Local{}
	cases := []struct {
		name string
		a    Action
		want string
	}{
		{"bad name", Action{Name: "de ploy", Script: "true"}, "the name must be"},
		{"empty name", Action{Script: "true"}, "the name must be"},
		{"no command", Action{Name: "x"}, "no command"},
		{"both", Action{Name: "x", Script: "true", Args: []string{"true"}}, "both"},
		{"empty program", Action{Name: "x", Args: []string{""}}, "program is empty"},
		{"bad schema", Action{Name: "x", Script: "true", InputSchema: json.RawMessage(`{"type":7}`)}, "input schema"},
		{"not an object", Action{Name: "x", Script: "true", InputSchema: json.RawMessage(`{"type":"string"}`)}, "must be object"},
	}
	for _, c := range cases {
		if _, err := New(c.a, local); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := New(Action{Name: "x", Script: "true"}, nil); err == nil {
		t.Error("nil backend accepted")
	}
	tl, err := New(Action{Name: "deploy", Description: " Deploys. ", Args: []string{"true"}}, local)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tool.Meta{Category: tool.CategoryExecute}, tool.MetaOf(tl)); diff != "" {
		t.Errorf("meta -want +got:\n%s", diff)
	}
	spec := tl.Spec()
	if spec.Name != "deploy" || spec.Description != "Deploys." || string(spec.InputSchema) != `{"type":"object"}` {
		t.Errorf("spec %+v", spec)
	}
}

// The input reaches the command as data: JSON in REIN_INPUT and in the
// file REIN_INPUT_FILE names, and scalar properties as REIN_INPUT_<NAME>.
func TestInputInEnvAndFile_ACTION1(t *testing.T) {
	dir := t.TempDir()
	a := Action{Name: "show", InputSchema: json.RawMessage(schema), Dir: dir, Env: []string{"REIN_AGENT_DEPTH=1"},
		Script: `printf 'input=%s\n' "$REIN_INPUT"
printf 'file=%s\n' "$(cat "$REIN_INPUT_FILE")"
printf 'name=%s count=%s dry=%s tags=%s\n' "$REIN_INPUT_NAME" "$REIN_INPUT_COUNT" "$REIN_INPUT_DRY_RUN" "${REIN_INPUT_TAGS-unset}"
printf 'dir=%s action=%s depth=%s\n' "$REIN_ACTION_DIR" "$REIN_ACTION_NAME" "$REIN_AGENT_DEPTH"
printf 'pwd=%s\n' "$PWD"
printf 'inputfile=%s\n' "$REIN_INPUT_FILE"`}
	r, c := call(t, a, &exec.Local{}, `{"name": "web", "count": 3, "dryRun": true, "tags": ["a","b"]}`)
	if r.IsError {
		t.Fatalf("error: %s", r.TextOf())
	}
	lines := strings.Split(r.TextOf(), "\n")
	want := []string{
		`input={"name":"web","count":3,"dryRun":true,"tags":["a","b"]}`,
		`file={"name":"web","count":3,"dryRun":true,"tags":["a","b"]}`,
		`name=web count=3 dry=true tags=unset`,
		`dir=` + dir + ` action=show depth=1`,
		`pwd=` + c.WorkDir,
	}
	if diff := cmp.Diff(want, lines[:len(want)]); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	file := strings.TrimPrefix(lines[len(lines)-1], "inputfile=")
	if filepath.Dir(file) != c.SessionDir {
		t.Errorf("input file %s is not in the session directory %s", file, c.SessionDir)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("input file %s left behind (%v)", file, err)
	}
	if r.Metadata["exit_code"] != 0 || r.Metadata["action"] != "show" {
		t.Errorf("metadata %v", r.Metadata)
	}
	if _, ok := r.Metadata["duration_ms"]; !ok {
		t.Errorf("no duration in %v", r.Metadata)
	}
}

// Shell code in the input is data: not run, whether the command quotes the
// variables or not, in a script or an argument vector.
func TestInjectionInert_ACTION1(t *testing.T) {
	payloads := []string{
		"$(touch pwned1)",
		"`touch pwned2`",
		"x; touch pwned3; rm -rf .",
		"'; touch pwned4; echo '",
		"\"; touch pwned5; #",
		"| touch pwned6",
		"${IFS}touch${IFS}pwned7",
		"\n touch pwned8",
	}
	scripts := map[string]Action{
		"quoted":   {Script: `echo "$REIN_INPUT_MSG"; echo "$REIN_INPUT"; cat "$REIN_INPUT_FILE"`},
		"unquoted": {Script: `echo $REIN_INPUT_MSG; echo $REIN_INPUT`},
		"argv":     {Args: []string{"printf", "%s\n", "$REIN_INPUT_MSG", "$(touch pwned9)"}},
	}
	for kind, a := range scripts {
		for _, p := range payloads {
			a.Name, a.InputSchema = "echo", json.RawMessage(schema)
			in, _ := json.Marshal(map[string]string{"name": "n", "msg": p, "$(touch pwned10)": p})
			r, c := call(t, a, &exec.Local{}, string(in))
			if r.IsError {
				t.Errorf("%s %q: %s", kind, p, r.TextOf())
			}
			entries, _ := os.ReadDir(c.WorkDir)
			for _, e := range entries {
				t.Errorf("%s %q: the input ran: %s exists", kind, p, e.Name())
			}
		}
	}
}

func TestExitCodes_ACTION1(t *testing.T) {
	cases := []struct {
		script   string
		code     int
		isErr    bool
		contains string
	}{
		{"echo ok", 0, false, "ok"},
		{"true", 0, false, "(no output)"},
		{"echo failing >&2; exit 3", 3, true, "failing\n\nexit code 3"},
		{"exit 1", 1, true, "exit code 1"},
		{"no-such-interpreter-xyz script.py", 127, true, "exit code 127: a program was not found"},
	}
	for _, c := range cases {
		r, _ := call(t, Action{Name: "x", Script: c.script}, &exec.Local{}, `{}`)
		if r.IsError != c.isErr || r.Metadata["exit_code"] != c.code || !strings.Contains(r.TextOf(), c.contains) {
			t.Errorf("%s: IsError %v exit %v %q; want %v %d %q", c.script, r.IsError, r.Metadata["exit_code"], r.TextOf(), c.isErr, c.code, c.contains)
		}
	}
}

// A program that is not installed gives an error result that says so.
func TestMissingInterpreter_ACTION1(t *testing.T) {
	r, _ := call(t, Action{Name: "x", Args: []string{"no-such-interpreter-xyz", "run.py"}}, &exec.Local{}, `{}`)
	if !r.IsError || !strings.Contains(r.TextOf(), `The program "no-such-interpreter-xyz" was not found`) {
		t.Errorf("got %v %q", r.IsError, r.TextOf())
	}
	if r.Metadata["backend"] != "local" {
		t.Errorf("metadata %v", r.Metadata)
	}
}

func TestTimeout_ACTION1(t *testing.T) {
	a := Action{Name: "slow", Script: "echo started; sleep 30", Timeout: 300 * time.Millisecond}
	r, _ := call(t, a, &exec.Local{KillDelay: 100 * time.Millisecond}, `{}`)
	if !r.IsError || r.Metadata["timed_out"] != true || !strings.Contains(r.TextOf(), "started\n\naction slow timed out after 300ms") {
		t.Errorf("got %v %v %q", r.IsError, r.Metadata, r.TextOf())
	}
}

func TestCancelled_ACTION1(t *testing.T) {
	tl, err := New(Action{Name: "slow", Script: "sleep 30"}, &exec.Local{KillDelay: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	r, err := tl.Run(ctx, tool.Call{ID: "c", WorkDir: t.TempDir(), SessionDir: t.TempDir(), Input: json.RawMessage(`{}`)})
	if err != nil || !r.IsError || r.Metadata["cancelled"] != true {
		t.Errorf("got %v %v %v", err, r.IsError, r.Metadata)
	}
}

// Long output is cut to head and tail; the whole is saved in the session
// directory, whether the backend kept it in memory or spilled it.
func TestLongOutputSpilled_ACTION1(t *testing.T) {
	for name, backend := range map[string]*exec.Local{"memory": {}, "spill": {MaxMemory: 4096}} {
		t.Run(name, func(t *testing.T) {
			// A spill directory of the test's own: the shared default
			// (/tmp/rein) is written by every package's tests at once.
			backend.SpillDir = t.TempDir()
			r, c := call(t, Action{Name: "long", Script: "seq 1 100000"}, backend, `{}`)
			if r.IsError {
				t.Fatalf("error: %.300s", r.TextOf())
			}
			text := r.TextOf()
			path, _ := r.Metadata["output_path"].(string)
			if path != filepath.Join(c.SessionDir, "action-call_1.log") {
				t.Fatalf("output_path %q", path)
			}
			data, err := os.ReadFile(path)
			if err != nil || len(data) != 588895 {
				t.Fatalf("saved output: %d bytes, %v", len(data), err)
			}
			if len(text) > 3000 || !strings.HasPrefix(text, "1\n2\n3\n") || !strings.HasSuffix(text, "99999\n100000") ||
				!strings.Contains(text, "the whole output (588895 bytes) is in "+path) {
				t.Errorf("preview (%d bytes): %q", len(text), text)
			}
		})
	}
}

func TestUpperSnake_ACTION1(t *testing.T) {
	cases := map[string]string{
		"name": "NAME", "dryRun": "DRY_RUN", "dry-run": "DRY_RUN", "dry_run": "DRY_RUN", "URLPath": "URL_PATH",
		"v2Name": "V2_NAME", "a.b c": "A_B_C", "__x__": "X", "é": "", "$(touch x)": "TOUCH_X", "HTTPServer2": "HTTP_SERVER2",
		"file": "FILE", "ID": "ID",
	}
	for in, want := range cases {
		if got := upperSnake(in); got != want {
			t.Errorf("upperSnake(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPropertyEnv_ACTION1(t *testing.T) {
	_, props, err := decodeInput(json.RawMessage(`{"file":"x","dry_run":false,"dryRun":true,"n":1.50,"z":null,
		"o":{"a":1},"nul":"a\u0000b","big":"` + strings.Repeat("x", MaxEnvValue+1) + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"REIN_INPUT_DRY_RUN=true", "REIN_INPUT_N=1.50"}
	if diff := cmp.Diff(want, propertyEnv(props)); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

// A big input is left out of REIN_INPUT (the kernel bounds one variable)
// but is in the file.
func TestBigInput_ACTION1(t *testing.T) {
	big := strings.Repeat("y", 200_000)
	a := Action{Name: "big", Script: `echo "env=${#REIN_INPUT} file=$(wc -c < "$REIN_INPUT_FILE")"`}
	r, _ := call(t, a, &exec.Local{}, `{"msg":"`+big+`"}`)
	if r.IsError || r.TextOf() != "env=0 file=200010" {
		t.Errorf("got %v %q", r.IsError, r.TextOf())
	}
}

// FuzzInputEnv: any JSON object input gives variables with valid names
// under REIN_INPUT_, none of them REIN_INPUT_FILE, no NUL, none too long.
func FuzzInputEnv(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"dryRun":true,"dry-run":false}`, `{"file":"x"}`, `{"é":"x","$(x)":"y"}`,
		`{"a":"\u0000"}`, `[1]`, `"x"`, `{"a":{"b":1}}`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, props, err := decodeInput(json.RawMessage(s))
		if err != nil {
			return
		}
		for _, kv := range propertyEnv(props) {
			name, val, ok := strings.Cut(kv, "=")
			suffix, _ := strings.CutPrefix(name, EnvPrefix)
			if !ok || suffix == "" || name == EnvInputFile || strings.Trim(suffix, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" ||
				strings.HasPrefix(suffix, "_") || strings.IndexByte(val, 0) >= 0 || len(val) > MaxEnvValue {
				t.Fatalf("input %q gave %q", s, kv)
			}
		}
	})
}
