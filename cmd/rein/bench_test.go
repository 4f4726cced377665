package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// firstRequest records when the first model request of a run arrived and
// how big it was.
type firstRequest struct {
	mu    sync.Mutex
	at    time.Time
	bytes int
}

func (f *firstRequest) reset() {
	f.mu.Lock()
	f.at, f.bytes = time.Time{}, 0
	f.mu.Unlock()
}

func (f *firstRequest) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		if f.at.IsZero() {
			f.at, f.bytes = time.Now(), len(body)
		}
		f.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}

// BenchmarkOneToolTask runs the built binary on the one-tool task against
// the mock vendor server on loopback (Anthropic wire format) and reports,
// per run: wall time (ns/op), the CPU of rein and every process it started
// (cpu-ms/op), start → first model request (ms-to-first-request, the
// mean; p50-ms-to-first-request, the median: one slow start, when the
// machine is busy, moves the mean by a millisecond),
// the first request's size (first-request-bytes: system prompt and tool
// schemas) and the process's peak RSS (maxrss-KiB).
//
// The tool call is a bash command, sandboxed where bubblewrap runs: first
// with rein alone (rein serves as the sandbox's Landlock helper), then with
// rein-sandbox-helper built beside it, as scripts/build lays them out
// (SPEC TOOL-5, issue 30).
func BenchmarkOneToolTask(b *testing.B) {
	dir := b.TempDir()
	bin := buildRein(b, dir)
	b.Run("rein-alone", func(b *testing.B) { oneToolTaskRuns(b, bin) })
	c := exec.Command("go", "build", "-o", filepath.Join(dir, "rein-sandbox-helper"), "../rein-sandbox-helper")
	if out, err := c.CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/rein-sandbox-helper: %v\n%s", err, out)
	}
	b.Run("with-rein-sandbox-helper", func(b *testing.B) { oneToolTaskRuns(b, bin) })
}

func oneToolTaskRuns(b *testing.B, bin string) {
	srv := mockserver.NewUnstarted()
	var first firstRequest
	hs := httptest.NewServer(first.wrap(srv.Handler()))
	defer hs.Close()
	p := protocols[0]
	home, ws := homeFor(b, p), b.TempDir()
	// run runs rein once, the benchmark's timer running only while rein
	// does; it returns with the timer stopped.
	run := func() (toFirst time.Duration, cmd *exec.Cmd) {
		b.StopTimer()
		srv.Reset()
		oneToolTask(srv)
		first.reset()
		cmd = reinCmd(bin, home, ws, hs.URL, p, "text")
		b.StartTimer()
		start := time.Now()
		out, err := cmd.Output()
		b.StopTimer()
		if err != nil {
			b.Fatalf("rein: %v\n%s", err, out)
		}
		first.mu.Lock()
		defer first.mu.Unlock()
		return first.at.Sub(start), cmd
	}
	// One run before the measured ones, so the first of them does not pay
	// for what any later run finds warm (the binary's pages, the sandbox's
	// probe, the session directory's parents).
	run()
	var toFirst []time.Duration
	var reqBytes, rss float64
	stopReaping := reapChildren(b)
	cpu0 := childrenCPU(b)
	b.ResetTimer()
	b.StartTimer()
	for b.Loop() {
		d, cmd := run()
		toFirst = append(toFirst, d)
		first.mu.Lock()
		reqBytes += float64(first.bytes)
		first.mu.Unlock()
		rss += float64(maxRSS(cmd))
		b.StartTimer()
	}
	stopReaping()
	n := float64(b.N)
	var sum time.Duration
	for _, d := range toFirst {
		sum += d
	}
	slices.Sort(toFirst)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric((childrenCPU(b)-cpu0).Seconds()*1000/n, "cpu-ms/op")
	b.ReportMetric(ms(sum)/n, "ms-to-first-request")
	b.ReportMetric(ms(toFirst[len(toFirst)/2]), "p50-ms-to-first-request")
	b.ReportMetric(reqBytes/n, "first-request-bytes")
	b.ReportMetric(rss/n, "maxrss-KiB")
}

// childrenCPU is the CPU time of the children waited for so far.
func childrenCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reapChildren makes the benchmark the subreaper of what rein starts, so
// the processes of a sandbox's namespaces, which bubblewrap's outer
// process leaves without waiting for them, count in childrenCPU (cpu-ms/op
// is then rein with every process of its tool call). The function it
// returns reaps them, once every command has returned, and stops.
func reapChildren(b *testing.B) func() {
	const prSetChildSubreaper = 36
	set := func(on uintptr) {
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, on, 0); errno != 0 {
			b.Fatal("PR_SET_CHILD_SUBREAPER:", errno)
		}
	}
	set(1)
	return func() {
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG|syscall.WALL, nil)
			if err == syscall.ECHILD {
				break
			}
			if pid <= 0 {
				time.Sleep(time.Millisecond)
			}
		}
		set(0)
	}
}

// BenchmarkVersion runs rein --version: start-up cost alone.
func BenchmarkVersion(b *testing.B) {
	bin := buildRein(b, b.TempDir())
	var rss float64
	for b.Loop() {
		cmd := exec.Command(bin, "--version")
		if out, err := cmd.Output(); err != nil {
			b.Fatalf("rein --version: %v\n%s", err, out)
		}
		rss += float64(maxRSS(cmd))
	}
	b.ReportMetric(rss/float64(b.N), "maxrss-KiB")
}

// maxRSS is the peak resident set of a finished command, in KiB.
func maxRSS(cmd *exec.Cmd) int64 {
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss
	}
	return 0
}
