package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/server"
)

// BenchmarkFanout measures one event from Publish to the read of its frame
// by each of 1,000 SSE clients of the same session, over loopback (SPEC
// API-2, issue 30: the aim is p99 ≤ 10 ms). Every op publishes one
// text_delta and waits until every client has read it; p50-ms, p99-ms and
// max-ms are over all clients and ops, from Publish's start; cpu-µs/client
// is the process's CPU time (server and clients: the clients' reads are
// a constant share) per op and client, the steadier figure on a shared
// machine. The burst20 variants publish 20 deltas at once, as a run's
// stream does, and measure to the read of the last.
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchFanout(b, n, 1) })
		b.Run(fmt.Sprint(n, "-burst20"), func(b *testing.B) { benchFanout(b, n, 20) })
	}
}

func benchFanout(b *testing.B, n, burst int) {
	e := newEnvBus(b, eventbus.Options{Buffer: 1 << 12}, func(c *server.Config) {
		c.MaxStreamsPerCaller, c.MaxStreams = -1, -1
	})
	f := e.fixture(b, "ada")
	u, err := url.Parse(e.ts.URL)
	if err != nil {
		b.Fatal(err)
	}
	type read struct {
		id int64
		at time.Time
	}
	reads := make(chan read, n)
	conns := make([]net.Conn, 0, n)
	b.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, br := dialEvents(b, u.Host, f.session, f.tok)
		conns = append(conns, c)
		go func() {
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if id, ok := strings.CutPrefix(line, "id: "); ok {
					v, _ := strconv.ParseInt(strings.TrimSpace(id), 10, 64)
					if v%int64(burst) == 0 { // the last of its burst
						reads <- read{v, time.Now()}
					}
				}
			}
		}()
	}
	data := []byte(`{"type":"text_delta","time":"2026-11-21T07:00:01Z","session_id":"s1","run_id":"r1","turn":1,"text":"Let me "}`)
	var lat []time.Duration
	id := int64(0)
	cpu0 := processCPU(b)
	for b.Loop() {
		start := time.Now()
		for range burst {
			id++
			if err := e.bus.Publish(bg, eventbus.Event{SessionID: f.session, ID: id, Type: "text_delta", Data: data}); err != nil {
				b.Fatal(err)
			}
		}
		for range n {
			r := <-reads
			if r.id != id {
				b.Fatalf("read %d, want %d", r.id, id)
			}
			lat = append(lat, r.at.Sub(start))
		}
	}
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(time.Microsecond)/float64(b.N*n), "cpu-µs/client")
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
}

// processCPU is the CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// dialEvents opens a session's event stream on a connection of its own
// and reads the answer's headers.
func dialEvents(b *testing.B, host, sessionID, tok string) (net.Conn, *bufio.Reader) {
	b.Helper()
	c, err := net.Dial("tcp", host)
	if err != nil {
		b.Fatal(err)
	}
	req := "GET /sessions/" + sessionID + "/events HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + tok + "\r\nAccept: text/event-stream\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		b.Fatal(err)
	}
	br := bufio.NewReaderSize(c, 4096)
	status, err := br.ReadString('\n')
	for err == nil {
		var h string
		if h, err = br.ReadString('\n'); h == "\r\n" {
			break
		}
	}
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 200") {
		b.Fatalf("GET events: %q: %v", status, err)
	}
	return c, br
}

// BenchmarkIdleStreams measures what idle SSE clients cost the server while
// they listen (SPEC API-2, API-9, issue 30: a run among 10,000 listeners
// within 2× of a run alone). 4,000 clients (the benchmark holds both ends
// of each connection) spread over 10 sessions read their answer's headers
// and nothing more; each op is one full collection (runtime.GC), the mark
// a run's allocations start among them. heap-B/client and stack-B/client
// are the live heap and goroutine stacks they add, after a collection;
// gc-cpu-ms is an op's CPU (the process's: the idle clients use none),
// gc-ms its wall time, gc-ms-alone the wall time before they came. With
// REIN_BENCH_HEAPPROFILE=FILE the live heap with the clients is written to
// FILE (go tool pprof -sample_index=inuse_space).
func BenchmarkIdleStreams(b *testing.B) {
	const n, sessions = 4000, 10
	e := newEnvBus(b, eventbus.Options{Buffer: 256}, func(c *server.Config) {
		c.MaxStreamsPerCaller, c.MaxStreams = -1, -1
	})
	u, err := url.Parse(e.ts.URL)
	if err != nil {
		b.Fatal(err)
	}
	fs := make([]fixture, sessions)
	for i := range fs {
		fs[i] = e.fixture(b, fmt.Sprint("caller", i))
	}
	gcTime := func() time.Duration {
		start := time.Now()
		runtime.GC()
		return time.Since(start)
	}
	var before, with runtime.MemStats
	runtime.GC()
	alone := gcTime() // the second: sync.Pool's victims are gone

	runtime.ReadMemStats(&before)
	conns := make([]net.Conn, 0, n)
	b.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := range n {
		f := fs[i%sessions]
		c, _ := dialEvents(b, u.Host, f.session, f.tok)
		conns = append(conns, c)
	}
	time.Sleep(100 * time.Millisecond) // the streams' first writes are done
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&with)
	if f := os.Getenv("REIN_BENCH_HEAPPROFILE"); f != "" {
		out, err := os.Create(f)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.WriteHeapProfile(out); err != nil {
			b.Fatal(err)
		}
		out.Close()
	}
	var total time.Duration
	cpu0 := processCPU(b)
	for b.Loop() {
		total += gcTime()
	}
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(time.Millisecond)/float64(b.N), "gc-cpu-ms")
	b.ReportMetric(float64(total)/float64(time.Millisecond)/float64(b.N), "gc-ms")
	b.ReportMetric(float64(alone)/float64(time.Millisecond), "gc-ms-alone")
	b.ReportMetric(float64(int64(with.HeapAlloc)-int64(before.HeapAlloc))/n, "heap-B/client")
	b.ReportMetric(float64(int64(with.StackInuse)-int64(before.StackInuse))/n, "stack-B/client")
}
