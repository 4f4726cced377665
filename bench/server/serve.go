package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/reinhq/rein/api"
)

// server is a running `rein serve` with a fresh HOME, data directory and
// project.
type server struct {
	cmd     *exec.Cmd
	base    string // http://127.0.0.1:PORT
	addr    string
	project string
	hc      *http.Client

	mu     sync.Mutex
	tail   []string // the last lines of its stderr
	exited chan struct{}
	onLine func(line string) // sees every line of its stderr, when set
	warns  int               // lines logged at WARN or ERROR (under mu)
}

// startServer starts rein serve under dir and waits until it listens.
func startServer(bin, dir, vendorURL string, maxConcurrent int) (*server, error) {
	root := filepath.Join(dir, "root")
	project, err := makeProject(root)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	// The idle clients are all the local caller: lift the stream caps
	// (SPEC API-9) that would refuse the 33rd.
	return launch(bin, dir, project, vendorURL, servePrefix, nil, "serve", "--addr", "127.0.0.1:0", "--root", root, "--data-dir", data,
		"--rate-limit=-1", "--max-concurrent", strconv.Itoa(maxConcurrent), "--shutdown-timeout", "2s",
		"--max-streams-per-caller", "1000000", "--max-streams", "1000000")
}

// makeProject creates the project the runs list under root.
func makeProject(root string) (string, error) {
	project := filepath.Join(root, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		return "", err
	}
	for _, f := range []string{"README.md", "main.go", "go.mod"} {
		if err := os.WriteFile(filepath.Join(project, f), []byte("// "+f+"\n"), 0o644); err != nil {
			return "", err
		}
	}
	return project, nil
}

// benchSettings are the user settings of the bench's HOME: the runs'
// shell command (bashCommand, an echo) is allowed without asking,
// as an operator allows the commands of an unattended server.
const benchSettings = `permissions:
  allow: ["Bash(echo:*)"]
`

// writeSettings writes benchSettings as the user settings under home.
func writeSettings(home string) error {
	dir := filepath.Join(home, ".config", "rein")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "settings.yaml"), []byte(benchSettings), 0o644)
}

// The stderr lines that say a process is ready: rein serve's names its
// address; rein worker's nothing of use.
const (
	servePrefix  = "rein: serving on http://"
	workerPrefix = "rein: working"
)

// launch starts rein with args (a fresh HOME under dir, the project as its
// working directory, the mock vendor's key and URL), passes each line of its
// stderr to onLine (when not nil) and waits for the line starting with
// ready; for rein serve, the address after it becomes the server's.
func launch(bin, dir, project, vendorURL, ready string, onLine func(string), args ...string) (*server, error) {
	home := filepath.Join(dir, "home")
	if err := writeSettings(home); err != nil {
		return nil, err
	}
	s := &server{project: project, exited: make(chan struct{}), onLine: onLine}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Dir = s.project
	s.cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"ANTHROPIC_API_KEY=" + vendorKey, "ANTHROPIC_BASE_URL=" + vendorURL}
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("rein %s: %w", args[0], err)
	}
	addr := make(chan string, 1)
	go s.readLog(stderr, ready, addr)
	select {
	case a := <-addr:
		if ready == servePrefix {
			s.addr, s.base = a, "http://"+a
		}
	case <-s.exited:
		return nil, fmt.Errorf("rein %s exited: %v\n%s", args[0], s.cmd.ProcessState, s.log())
	case <-time.After(30 * time.Second):
		s.stop()
		return nil, fmt.Errorf("rein %s did not start within 30s:\n%s", args[0], s.log())
	}
	s.hc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}}
	return s, nil
}

// readLog keeps the tail of the server's stderr (debug lines left out),
// passes each line to onLine and sends what follows the ready prefix.
func (s *server) readLog(r io.Reader, ready string, addr chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, ready); ok {
			a, _, _ := strings.Cut(rest, " ")
			addr <- a
		}
		if s.onLine != nil {
			s.onLine(line)
		}
		if strings.Contains(line, `"level":"DEBUG"`) {
			continue
		}
		s.mu.Lock()
		if strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
			s.warns++
		}
		s.tail = append(s.tail, line)
		if len(s.tail) > 40 {
			s.tail = s.tail[len(s.tail)-40:]
		}
		s.mu.Unlock()
	}
	_ = s.cmd.Wait()
	close(s.exited)
}

// warnings counts the lines it logged at WARN or ERROR.
func (s *server) warnings() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.warns
}

// log returns the last lines of the server's stderr.
func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.tail, "\n")
}

// stop ends the server: SIGTERM, then SIGKILL if it lingers.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// memory reads the server's resident set now and at its peak, in bytes.
func (s *server) memory() (rss, hwm int64, err error) {
	m, err := s.status("VmRSS", "VmHWM")
	return m["VmRSS"], m["VmHWM"], err
}

// anon reads the server's anonymous resident memory (RssAnon: heap, stacks;
// not the binary's pages), in bytes.
func (s *server) anon() (int64, error) {
	m, err := s.status("RssAnon")
	return m["RssAnon"], err
}

// status reads the named kB fields of /proc/PID/status, in bytes; each
// must be there.
func (s *server) status(keys ...string) (map[string]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return nil, err
	}
	m := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || !slices.Contains(keys, k) {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("/proc status %s: %w", line, err)
		}
		m[k] = kb << 10
	}
	for _, k := range keys {
		if m[k] == 0 {
			return nil, fmt.Errorf("no %s in /proc/%d/status", k, s.cmd.Process.Pid)
		}
	}
	return m, nil
}

// userHZ is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// Linux).
const userHZ = 100

// cpu reads the CPU time (user and system) the server has used, and that
// of its children it waited for (its commands, with theirs).
func (s *server) cpu() (self, children time.Duration, err error) { return procCPU(s.cmd.Process.Pid) }

// pidCPU reads the CPU time (user and system) process pid has used.
func pidCPU(pid int) (time.Duration, error) {
	self, _, err := procCPU(pid)
	return self, err
}

// procCPU reads the CPU time (user and system) process pid has used, and
// that of the children it waited for.
func procCPU(pid int) (self, children time.Duration, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The fields after the command name, which is in parentheses: state
	// is field 3, utime 14, stime 15, cutime 16, cstime 17.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 15 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	var ticks [4]int64
	for k, v := range f[11:15] {
		if ticks[k], err = strconv.ParseInt(v, 10, 64); err != nil {
			return 0, 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
	}
	tick := time.Second / userHZ
	return time.Duration(ticks[0]+ticks[1]) * tick, time.Duration(ticks[2]+ticks[3]) * tick, nil
}

// commands asks /ready how the server runs commands (SPEC API-9).
func (s *server) commands(ctx context.Context) (string, error) {
	var r api.Ready
	if err := s.call(ctx, http.MethodGet, "/ready", nil, &r, http.StatusOK); err != nil {
		return "", err
	}
	return r.Commands, nil
}

// openFiles counts the server's open file descriptors.
func (s *server) openFiles() int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", s.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	return len(ents)
}

// call sends a JSON request and decodes the answer, which must have the
// status want.
func (s *server) call(ctx context.Context, method, path string, body, out any, want int) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, raw)
	}
	return json.Unmarshal(raw, out)
}

// workspace opens the project as a workspace.
func (s *server) workspace(ctx context.Context) (string, error) {
	var ws api.Workspace
	err := s.call(ctx, http.MethodPost, "/workspaces", api.CreateWorkspace{Kind: "project", Dir: s.project}, &ws, http.StatusCreated)
	return ws.ID, err
}

// session creates a session in the workspace.
func (s *server) session(ctx context.Context, workspaceID string) (string, error) {
	var sess api.Session
	err := s.call(ctx, http.MethodPost, "/sessions", api.CreateSession{WorkspaceID: workspaceID}, &sess, http.StatusCreated)
	return sess.ID, err
}

// message posts a message and returns its run id.
func (s *server) message(ctx context.Context, sessionID, text string) (string, error) {
	var acc api.Accepted
	err := s.call(ctx, http.MethodPost, "/sessions/"+sessionID+"/messages", api.Message{Text: text}, &acc, http.StatusAccepted)
	return acc.RunID, err
}

// lastWarning returns the last line it logged at WARN or ERROR, if among
// the last lines.
func (s *server) lastWarning() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.tail) - 1; i >= 0; i-- {
		if l := s.tail[i]; strings.Contains(l, `"level":"WARN"`) || strings.Contains(l, `"level":"ERROR"`) {
			return l
		}
	}
	return ""
}
