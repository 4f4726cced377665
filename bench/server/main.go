// Command server measures `rein serve` end to end (issue 10, Performance):
// scripted runs per minute through the whole server — HTTP POST in, SQLite,
// SSE out — and the server's memory with many idle SSE clients.
//
//	go run ./bench/server [-bin PATH] [-sessions 16] [-per-session 5] [-tool list_dir] [-warmup 3s] [-duration 30s]
//	                      [-clients 10000] [-sse-sessions 100]
//
// It builds rein and rein-sandbox-helper beside it (or takes -bin), starts
// the mock vendor in-process on 127.0.0.1 — every run gets one tool call
// and then a text reply, at zero latency — and starts `rein serve` on a
// free loopback port with a fresh HOME and data directory and no rate
// limit, its sandbox as by default.
//
// Runs: -sessions workers each open a session and its event stream, post a
// message and read the stream until that run's done event, then post the
// next; after -per-session runs a worker moves on to a new session, so
// histories stay as short as in use. The runs whose done event arrives
// within -duration, after -warmup, are counted; latency is POST → done read.
// -sessions takes a list (1,4,16): each count gets a fresh server, one
// after another. -tool says what the run calls: list_dir (read-only, in the
// server's process) or bash (a shell command, which rein serve runs in its
// sandbox: bubblewrap, and Landlock through rein-sandbox-helper). The
// table says which, how the server runs commands (/ready's "commands") and
// what the commands printed: their shell's PID, 2 inside bubblewrap's PID
// namespace. CPU a run is the server's own, its children's as it waited
// for them (the outer bubblewrap), and, where the bench may create a
// cgroup (v2, or v1's cpuacct; root), the server's with every process it
// started, bubblewrap's namespaces included.
//
// Issue 30's run — a session created and its stream opened for every run,
// a sandboxed shell command, until done — at 1, 4 and 16 sessions:
//
//	go run ./bench/server -clients 0 -tool bash -per-session 1 -sessions 1,4,16 -duration 15s
//
// Idle clients: a second, fresh server; -clients connections each GET the
// event stream of one of -sse-sessions sessions, read the answer's headers
// and then nothing. The server's VmRSS and VmHWM (/proc/PID/status) are read
// before and with the clients, and after they left (-leave-wait later); one
// run is timed before they come, while they listen and after. The
// program raises RLIMIT_NOFILE to its hard limit and stops with a clear
// message when that is too low for -clients.
//
// The production split (issue 13): with -database-url and -redis-url
// (default: $REIN_TEST_POSTGRES_URL and $REIN_TEST_REDIS_URL), the runs
// part measures the split instead, once for each count in -workers: a fresh
// PostgreSQL schema (bench_N, dropped at the end) and Redis prefix, two
// `rein serve --mode api` processes and N `rein worker` processes (each
// --max-concurrent); sessions post on API 1 and read their streams from
// API 2. Besides runs per minute and POST → done, it reports the queue
// latency (a run's created_at → started_at in the ledger; and the workers'
// debug lines "session taken"), the event latency (an event's "time" →
// read from API 2, same clock) and the CPU of each kind of process. The
// idle-clients part stays on one rein serve.
//
//	go run ./bench/server -clients 0 -duration 20s -database-url postgres://… -redis-url redis://… [-workers 1,2,4]
//
// Everything goes to 127.0.0.1; the program stops by itself and prints a
// table. Zero -duration or -clients skips that part.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// options are the command's flags.
type options struct {
	bin                     string
	sessions, perSession    int
	sessionCounts           []int  // -sessions: each count is measured in turn
	tool                    string // what each run calls: list_dir or bash
	warmup, duration        time.Duration
	clients, sseSessions    int
	maxConcurrent, dialPool int
	leaveWait               time.Duration
	databaseURL, redisURL   string
	workers                 []int
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "rein binary to measure (default: build ./cmd/rein into a temporary directory)")
	sessions := flag.String("sessions", "16", "concurrent sessions posting runs; a list (1,4,16) measures each count on a fresh server")
	flag.IntVar(&o.perSession, "per-session", 5, "runs posted to a session before its worker moves to a new one (1: a new session and stream every run)")
	flag.StringVar(&o.tool, "tool", toolListDir, "the tool each run calls: list_dir (in the server's process) or bash (a shell command in the server's sandbox)")
	flag.DurationVar(&o.warmup, "warmup", 3*time.Second, "runs before the measurement starts (not counted)")
	flag.DurationVar(&o.duration, "duration", 30*time.Second, "how long runs are counted (0: skip the runs)")
	flag.IntVar(&o.clients, "clients", 10000, "idle SSE clients (0: skip them)")
	flag.IntVar(&o.sseSessions, "sse-sessions", 100, "sessions the idle clients spread over")
	flag.IntVar(&o.maxConcurrent, "max-concurrent", 16, "rein serve --max-concurrent")
	flag.IntVar(&o.dialPool, "dial-parallel", 64, "idle clients connecting at once")
	flag.DurationVar(&o.leaveWait, "leave-wait", 20*time.Second,
		"how long after the idle clients left the server's memory is read (it notices them at each stream's heartbeat, every 15 s)")
	flag.StringVar(&o.databaseURL, "database-url", os.Getenv("REIN_TEST_POSTGRES_URL"),
		"PostgreSQL to measure the split on (with -redis-url; default $REIN_TEST_POSTGRES_URL); it gets a schema bench_N per step")
	flag.StringVar(&o.redisURL, "redis-url", os.Getenv("REIN_TEST_REDIS_URL"),
		"Redis to measure the split on (with -database-url; default $REIN_TEST_REDIS_URL)")
	workers := flag.String("workers", "1,2,4", "with both URLs: the worker counts to measure, one after another")
	flag.Parse()
	var err error
	if o.workers, err = parseCounts(*workers); err != nil {
		fmt.Fprintln(os.Stderr, "bench/server: -workers:", err)
		os.Exit(2)
	}
	if o.sessionCounts, err = parseCounts(*sessions); err != nil {
		fmt.Fprintln(os.Stderr, "bench/server: -sessions:", err)
		os.Exit(2)
	}
	o.sessions = o.sessionCounts[0]
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench/server:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.perSession < 1 || o.sseSessions < 1 || o.dialPool < 1 || o.clients < 0 {
		return errors.New("-per-session, -sse-sessions and -dial-parallel must be at least 1, -clients at least 0")
	}
	if o.tool != toolListDir && o.tool != toolBash {
		return fmt.Errorf("-tool %q: want %s or %s", o.tool, toolListDir, toolBash)
	}
	if err := raiseNofile(uint64(o.clients) + 1024); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "rein-bench-server-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := o.bin
	if bin == "" {
		if bin, err = build(tmp); err != nil {
			return err
		}
	}
	v, err := startVendor(o.tool)
	if err != nil {
		return err
	}
	defer v.close()
	ctx := context.Background()
	t := &table{}
	t.heading(fmt.Sprintf("rein serve — %s, %d CPUs, %s", bin, runtime.NumCPU(), time.Now().Format("2006-01-02")))
	t.row("sandbox helper", helperNote(bin))
	for _, n := range o.sessionCounts {
		if o.duration == 0 {
			break
		}
		o.sessions = n
		if o.split() {
			for _, w := range o.workers {
				r, err := measureSplit(ctx, o, bin, filepath.Join(tmp, fmt.Sprintf("split%d-%d", n, w)), v.url, w)
				if err != nil {
					return fmt.Errorf("split, %d sessions, %d workers: %w", n, w, err)
				}
				r.report(t, o)
				reportTools(t, v)
			}
			continue
		}
		r, err := measureRuns(ctx, o, bin, filepath.Join(tmp, fmt.Sprintf("runs%d", n)), v.url)
		if err != nil {
			return fmt.Errorf("runs, %d sessions: %w", n, err)
		}
		r.report(t, o)
		reportTools(t, v)
	}
	if o.clients > 0 {
		r, err := measureIdle(ctx, o, bin, filepath.Join(tmp, "idle"), v.url)
		if err != nil {
			return fmt.Errorf("idle clients: %w", err)
		}
		r.report(t, o)
	}
	t.print(os.Stdout)
	return nil
}

// helperNote says which Landlock helper the sandbox of bin uses: rein
// takes rein-sandbox-helper from beside its executable, else runs itself
// as the helper (exec.SelfHelper).
func helperNote(bin string) string {
	h := filepath.Join(filepath.Dir(bin), "rein-sandbox-helper")
	if _, err := os.Stat(h); err != nil {
		return "none beside the binary: rein serves as its own helper (+3 ms of CPU a command); build ./cmd/rein-sandbox-helper there"
	}
	return h
}

// reportTools adds what the runs' tools returned (each result's first
// line, and how many) and forgets it.
func reportTools(t *table, v *vendor) {
	for line, n := range v.toolResults() {
		if len(line) > 60 {
			line = line[:60] + "…"
		}
		t.row(fmt.Sprintf("tool result %q", line), fmt.Sprintf("%d runs", n))
	}
}

// split says the runs part measures the split (both URLs given).
func (o options) split() bool { return o.databaseURL != "" && o.redisURL != "" }

// parseCounts parses a comma-separated list of positive counts.
func parseCounts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q: want counts of at least 1, separated by commas", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// build builds rein into dir, and beside it rein-sandbox-helper, as
// scripts/build lays them out.
func build(dir string) (string, error) {
	bin := filepath.Join(dir, "rein")
	for _, p := range []struct{ out, pkg string }{{bin, "cmd/rein"}, {filepath.Join(dir, "rein-sandbox-helper"), "cmd/rein-sandbox-helper"}} {
		cmd := exec.Command("go", "build", "-o", p.out, "github.com/reinhq/rein/"+p.pkg)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build ./%s: %w\n%s", p.pkg, err, out)
		}
	}
	return bin, nil
}

// raiseNofile raises the soft limit of open files to the hard one (the
// server, started from here, inherits it) and fails when that is below
// need.
func raiseNofile(need uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("RLIMIT_NOFILE: %w", err)
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return fmt.Errorf("raise RLIMIT_NOFILE to %d: %w", lim.Max, err)
		}
	}
	if lim.Cur < need {
		return fmt.Errorf("open files are limited to %d (RLIMIT_NOFILE hard limit) and %d are needed for the idle clients: "+
			"raise the hard limit (ulimit -Hn, limits.conf, systemd LimitNOFILE) or pass a smaller -clients", lim.Cur, need)
	}
	return nil
}
