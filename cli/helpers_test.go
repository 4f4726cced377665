package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/registry"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// testEnv is a fresh user (HOME) and workspace for one test.
type testEnv struct {
	t     *testing.T
	home  string
	ws    string
	env   map[string]string
	stdin string
	tty   bool
	// models are the scripted models, by model string.
	models map[string]*llmtest.Scripted
	// customize, when set, edits the App before each run.
	customize func(*App)
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	root := t.TempDir()
	te := &testEnv{t: t, home: filepath.Join(root, "home"), ws: filepath.Join(root, "ws"),
		models: map[string]*llmtest.Scripted{}}
	te.env = map[string]string{"HOME": te.home, "PATH": os.Getenv("PATH")}
	for _, d := range []string{te.home, te.ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return te
}

// script registers a scripted model under "scripted/NAME".
func (te *testEnv) script(name string, replies ...llmtest.Reply) *llmtest.Scripted {
	s := llmtest.NewScripted(replies...)
	s.Name = "scripted"
	te.models["scripted/"+name] = s
	return s
}

// write creates a file in the workspace.
func (te *testEnv) write(rel, content string) string {
	te.t.Helper()
	return te.writeIn(te.ws, rel, content)
}

// writeIn creates the file rel under dir.
func (te *testEnv) writeIn(dir, rel, content string) string {
	te.t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		te.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		te.t.Fatal(err)
	}
	return p
}

var fixedNow = time.Date(2026, 11, 21, 7, 0, 0, 0, time.UTC)

// app returns the App of a run, writing to the given buffers.
func (te *testEnv) app(stdout, stderr *bytes.Buffer) *App {
	a := &App{Stdin: strings.NewReader(te.stdin), Stdout: stdout, Stderr: stderr,
		Getenv: func(k string) string { return te.env[k] }, Dir: te.ws,
		StdinTTY: te.tty, StdoutTTY: te.tty, StderrTTY: te.tty,
		Now: func() time.Time { return fixedNow },
		Models: func(spec string) (Model, bool, error) {
			s, ok := te.models[spec]
			if !ok {
				return Model{}, false, nil
			}
			name := strings.TrimPrefix(spec, "scripted/")
			return Model{Provider: s, ProviderName: "scripted", Name: name, Caps: registry.Model{
				Name: name, Provider: "scripted", ContextWindow: 100_000, MaxOutput: 4096,
				Price: registry.Price{InputPerMTok: 3, OutputPerMTok: 15}}}, true, nil
		}}
	if te.customize != nil {
		te.customize(a)
	}
	return a
}

// run runs rein with args and returns the exit code and the output.
func (te *testEnv) run(args ...string) (code int, stdout, stderr string) {
	te.t.Helper()
	var out, errb bytes.Buffer
	code = te.app(&out, &errb).Run(context.Background(), args)
	return code, out.String(), errb.String()
}

// mustRun runs rein and fails the test unless it exits with want.
func (te *testEnv) mustRun(want int, args ...string) (stdout, stderr string) {
	te.t.Helper()
	code, out, errs := te.run(args...)
	if code != want {
		te.t.Fatalf("rein %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, out, errs)
	}
	return out, errs
}

// normalise replaces what changes from run to run: ids, times, the
// temporary directories.
func (te *testEnv) normalise(s string) string {
	s = strings.ReplaceAll(s, te.ws, "$WS")
	s = strings.ReplaceAll(s, te.home, "$HOME")
	s = sessionIDRe.ReplaceAllString(s, `"session_id":"$$SESSION"`)
	s = runIDRe.ReplaceAllString(s, `"run_id":"$$RUN"`)
	return s
}

var (
	sessionIDRe = regexp.MustCompile(`"session_id":"[^"]*"`)
	runIDRe     = regexp.MustCompile(`"run_id":"[^"]*"`)
)

// golden compares got with testdata/NAME, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (go test -update rewrites it)\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// listThenAnswer is a two-turn script: list the workspace, then answer.
func listThenAnswer() []llmtest.Reply {
	return []llmtest.Reply{
		{Text: "Let me look.", ToolCalls: []llm.ToolUse{llmtest.Call("call_1", "list_dir", `{"path":"."}`)},
			Usage: llm.Usage{InputTokens: 1000, OutputTokens: 20}, Chunk: 5},
		{Text: "The workspace holds a.txt and b.txt.", Usage: llm.Usage{InputTokens: 1100, OutputTokens: 12}, Chunk: 8},
	}
}
