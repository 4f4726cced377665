package console_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// guard bounds every wait of the browser suite: reaching it is a failure.
const guard = 60 * time.Second

// fakeKey is the mock vendor's API key.
const fakeKey = "test-key-console"

// scenarios are what the Playwright script (testdata/console.e2e.mjs)
// does, in order, each reported as one line of JSON (SPEC API-10). A
// scenario missing from its output is a failure.
var scenarios = []string{
	"sign in",
	"a login link works once",
	"open a workspace",
	"run a prompt and see it stream",
	"model and tool output cannot inject markup",
	"approve a permission",
	"approve a plan",
	"reconnect mid-run: every event once, in order",
	"cancel a running turn",
	"queue a message while a run works",
	"two browsers on one session",
	"a page on another origin cannot use the session cookie",
	"answer a question in place",
	"workspace views: catalog, memory, knowledge base",
}

// TestConsoleInBrowser_API10 drives the console in headless Chromium with
// Playwright against rein serve (the built binary) and the mock vendor,
// through a same-origin proxy that can cut the browser's event streams
// (to make EventSource reconnect mid-run).
func TestConsoleInBrowser_API10(t *testing.T) {
	env := browserEnv(t)
	root := repoRoot(t)
	h := startHarness(t, root)
	shots := os.Getenv("REIN_CONSOLE_SCREENSHOTS") // a directory: write the docs' screenshots there
	figures := os.Getenv("REIN_CONSOLE_FIGURES") != ""
	ctx, cancel := context.WithTimeout(context.Background(), 4*guard)
	defer cancel()
	cmd := exec.CommandContext(ctx, env.node, filepath.Join(root, "console", "testdata", "console.e2e.mjs"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+env.modules, "CHROMIUM="+env.chromium, "BASE="+h.base, "REIN="+h.rein,
		"LOGIN_URL="+h.login, "PROJECT="+h.project, "EVIL="+h.evil, "SHOTS="+shots, "FIGURES="+fmt.Sprint(figures))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	t.Logf("the Playwright script took %s", time.Since(start).Round(time.Millisecond))
	results := map[string]result{}
	for _, line := range strings.Split(string(out), "\n") {
		var r result
		if json.Unmarshal([]byte(line), &r) == nil && r.Name != "" {
			results[r.Name] = r
		}
	}
	for _, name := range scenarios {
		t.Run(name, func(t *testing.T) {
			r, ok := results[name]
			switch {
			case !ok:
				t.Fatalf("the Playwright script did not report this scenario (it exited: %v)\n%s\nrein serve:\n%s", err, stderr.String(), h.log())
			case !r.OK:
				t.Fatalf("%s\n%s\nrein serve:\n%s", r.Error, stderr.String(), h.log())
			}
			if len(r.Data) > 0 {
				t.Logf("%s", r.Data)
			}
		})
	}
	if r, ok := results["figures"]; ok {
		t.Logf("figures: %s", r.Data)
	}
	if err != nil && !t.Failed() {
		t.Errorf("the Playwright script failed: %v\n%s", err, stderr.String())
	}
}

// result is one scenario's report.
type result struct {
	Name  string          `json:"name"`
	OK    bool            `json:"ok"`
	Error string          `json:"error"`
	Data  json.RawMessage `json:"data"`
}

// environment is what the suite needs from the machine.
type environment struct {
	node, chromium, modules string
}

// browserEnv finds node, Chromium and playwright-core (installed into
// .cache/npm by scripts/test), or skips saying which is missing.
func browserEnv(t *testing.T) environment {
	t.Helper()
	if testing.Short() {
		t.Skip("environment: -short: the browser suite builds rein and drives Chromium")
	}
	var e environment
	var err error
	if e.node, err = exec.LookPath("node"); err != nil {
		t.Skip("environment: node is not installed: the console's browser suite runs Playwright (apt-get install nodejs)")
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			e.chromium = p
			break
		}
	}
	if e.chromium == "" {
		t.Skip("environment: chromium is not installed: the console's browser suite drives it (apt-get install chromium; scripts/test installs it)")
	}
	e.modules = filepath.Join(repoRoot(t), ".cache", "npm", "node_modules")
	if _, err := os.Stat(filepath.Join(e.modules, "playwright-core", "package.json")); err != nil {
		t.Skip("environment: playwright-core is not in .cache/npm: scripts/test installs it (npm install --prefix .cache/npm playwright-core)")
	}
	return e
}

// repoRoot is the module's root directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

// harness is rein serve behind a same-origin proxy, the mock vendor, and
// a page of another origin.
type harness struct {
	t          *testing.T
	base, rein string // the proxy (the browser's origin), rein itself
	login      string // the one-time login link, on the proxy
	project    string
	evil       string // the attack page, on another origin
	vendor     *mockserver.Server
	mu         sync.Mutex
	lines      []string
	cuts       map[*context.CancelFunc]context.CancelFunc // of the open event streams
}

func startHarness(t *testing.T, root string) *harness {
	t.Helper()
	h := &harness{t: t, cuts: map[*context.CancelFunc]context.CancelFunc{}}
	h.vendor = mockserver.New()
	h.vendor.APIKey = fakeKey
	t.Cleanup(h.vendor.Close)
	bin := filepath.Join(t.TempDir(), "rein")
	start := time.Now()
	build := exec.Command("go", "build", "-o", bin, "./cmd/rein")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("built rein in %s", time.Since(start).Round(time.Millisecond))
	home, data, top := t.TempDir(), t.TempDir(), t.TempDir()
	h.project = filepath.Join(top, "project")
	if err := os.MkdirAll(h.project, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.project, "notes.txt"), []byte("hello from the project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--root", top, "--data-dir", data)
	cmd.Dir = h.project
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=" + fakeKey, "ANTHROPIC_BASE_URL=" + h.vendor.URL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			h.mu.Lock()
			h.lines = append(h.lines, sc.Text())
			h.mu.Unlock()
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	var login string
	deadline := time.After(guard)
	for h.rein == "" || login == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("rein serve exited before it served:\n%s", h.log())
			}
			if _, rest, ok := strings.Cut(l, "rein: serving on "); ok {
				h.rein, _, _ = strings.Cut(rest, " ")
			}
			if _, rest, ok := strings.Cut(l, "rein: console: open "); ok {
				login, _, _ = strings.Cut(rest, " ")
			}
		case <-deadline:
			t.Fatalf("rein serve printed no address and login link within %s:\n%s", guard, h.log())
		}
	}
	h.startProxy(t)
	_, frag, ok := strings.Cut(login, "/#login=")
	if !ok || !strings.HasPrefix(login, h.rein+"/") {
		t.Fatalf("login link %q: want %s/#login=TOKEN", login, h.rein)
	}
	h.login = h.base + "/#login=" + frag
	h.startEvil(t)
	return h
}

// startProxy serves rein on another port, as the browser's origin: it
// passes everything through, and /__test/ controls the test: enqueue
// the vendor's next replies, cut the open event streams.
func (h *harness) startProxy(t *testing.T) {
	target, err := url.Parse(h.rein)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	proxy.ErrorLog = log.New(io.Discard, "", 0) // the cuts are on purpose
	mux := http.NewServeMux()
	mux.HandleFunc("POST /__test/enqueue", func(w http.ResponseWriter, r *http.Request) {
		var turns []mockserver.Turn
		if err := json.NewDecoder(r.Body).Decode(&turns); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		// A scenario's script replaces what an earlier one left (a failed
		// scenario must not shift the replies of the next).
		h.vendor.Reset()
		h.vendor.Enqueue(turns...)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /__test/cut", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		n := len(h.cuts)
		for _, c := range h.cuts {
			c()
		}
		h.mu.Unlock()
		fmt.Fprint(w, n)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/events") {
			ctx, cancel := context.WithCancel(r.Context())
			h.mu.Lock()
			h.cuts[&cancel] = cancel
			h.mu.Unlock()
			defer func() {
				cancel()
				h.mu.Lock()
				delete(h.cuts, &cancel)
				h.mu.Unlock()
			}()
			r = r.WithContext(ctx)
		}
		proxy.ServeHTTP(w, r)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	h.base = ts.URL
}

// startEvil serves the attack page on an origin of its own (another port
// of 127.0.0.1: the same site, so a SameSite=Strict cookie of rein's is
// still sent with its requests).
func (h *harness) startEvil(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(repoRoot(t), "console", "testdata", "evil.html"))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	}))
	t.Cleanup(ts.Close)
	h.evil = ts.URL + "/"
}

func (h *harness) log() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.lines, "\n")
}
