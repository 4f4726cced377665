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
}

// startServer starts rein serve under dir and waits until it listens.
func startServer(bin, dir, vendorURL string, maxConcurrent int) (*server, error) {
	home, data, root := filepath.Join(dir, "home"), filepath.Join(dir, "data"), filepath.Join(dir, "root")
	s := &server{project: filepath.Join(root, "project"), exited: make(chan struct{})}
	for _, d := range []string{home, data, s.project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	for _, f := range []string{"README.md", "main.go", "go.mod"} {
		if err := os.WriteFile(filepath.Join(s.project, f), []byte("// "+f+"\n"), 0o644); err != nil {
			return nil, err
		}
	}
	s.cmd = exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--root", root, "--data-dir", data,
		"--rate-limit=-1", "--max-concurrent", strconv.Itoa(maxConcurrent), "--shutdown-timeout", "2s")
	s.cmd.Dir = s.project
	s.cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"ANTHROPIC_API_KEY=" + vendorKey, "ANTHROPIC_BASE_URL=" + vendorURL}
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("rein serve: %w", err)
	}
	addr := make(chan string, 1)
	go s.readLog(stderr, addr)
	select {
	case a := <-addr:
		s.addr, s.base = a, "http://"+a
	case <-s.exited:
		return nil, fmt.Errorf("rein serve exited: %v\n%s", s.cmd.ProcessState, s.log())
	case <-time.After(30 * time.Second):
		s.stop()
		return nil, fmt.Errorf("rein serve did not listen within 30s:\n%s", s.log())
	}
	s.hc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}}
	return s, nil
}

// readLog keeps the tail of the server's stderr and sends its address.
func (s *server) readLog(r io.Reader, addr chan<- string) {
	const prefix = "rein: serving on http://"
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			a, _, _ := strings.Cut(rest, " ")
			addr <- a
		}
		s.mu.Lock()
		s.tail = append(s.tail, line)
		if len(s.tail) > 40 {
			s.tail = s.tail[len(s.tail)-40:]
		}
		s.mu.Unlock()
	}
	_ = s.cmd.Wait()
	close(s.exited)
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
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc status %s: %w", line, err)
		}
		if k == "VmRSS" {
			rss = kb << 10
		} else {
			hwm = kb << 10
		}
	}
	if rss == 0 || hwm == 0 {
		return 0, 0, fmt.Errorf("no VmRSS/VmHWM in /proc/%d/status", s.cmd.Process.Pid)
	}
	return rss, hwm, nil
}

// userHZ is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// Linux).
const userHZ = 100

// cpu reads the CPU time (user and system) the server has used.
func (s *server) cpu() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses: state
	// is field 3, utime 14, stime 15.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", s.cmd.Process.Pid, b)
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", s.cmd.Process.Pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
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
