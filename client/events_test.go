package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/api"
)

// fast are options that make reconnections quick in tests.
var fast = Options{Token: "tok", ReconnectMin: time.Millisecond, ReconnectMax: 2 * time.Millisecond, PollInterval: 10 * time.Millisecond}

// sessionLog is the events a test session has, with ids of the runner's
// durable<<20|k scheme: durable events at k=0, deltas after them.
func sessionLog() []Event {
	var evs []Event
	add := func(id int64, typ, data string) {
		evs = append(evs, Event{ID: id, Type: typ, Data: json.RawMessage(data)})
	}
	add(1<<20, "message", `{"type":"message","text":"hi"}`)
	add(1<<20|1, "text_delta", `{"type":"text_delta","text":"Hel"}`)
	add(1<<20|2, "text_delta", `{"type":"text_delta","text":"lo"}`)
	add(2<<20, "message", "{\"type\":\"message\",\n\"text\":\"Hello\"}") // sent on two data lines
	add(3<<20, "tool_start", `{"type":"tool_start"}`)
	add(4<<20, "tool_end", `{"type":"tool_end"}`)
	add(4<<20|1, "text_delta", `{"type":"text_delta","text":"done"}`)
	add(5<<20, "done", `{"type":"done","run_id":"r1"}`)
	return evs
}

// sseServer serves a session's event stream. Each connection sends the
// events after Last-Event-ID with a heartbeat before each, then — while
// events remain — dies after perConn of them, in the middle of the next
// one; when all are sent it stays open until the client leaves.
type sseServer struct {
	events  []Event
	perConn int
	crlf    bool

	mu      sync.Mutex
	resumes []string // the Last-Event-ID of each connection
	auth    []string
}

func (s *sseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/sessions/s1/events" {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.resumes = append(s.resumes, r.Header.Get("Last-Event-ID"))
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	s.mu.Unlock()
	after, _ := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	nl := "\n"
	if s.crlf {
		nl = "\r\n"
	}
	rc := http.NewResponseController(w)
	write := func(s string) { io.WriteString(w, strings.ReplaceAll(s, "\n", nl)); rc.Flush() }
	sent := 0
	for _, ev := range s.events {
		if ev.ID <= after {
			continue
		}
		frame := fmt.Sprintf("id: %d\nevent: %s\n", ev.ID, ev.Type)
		for line := range strings.SplitSeq(string(ev.Data), "\n") {
			frame += "data: " + line + "\n"
		}
		if sent == s.perConn {
			write(frame) // no blank line: the event is cut off
			return
		}
		write(": ping\n\n" + frame + "\n")
		sent++
	}
	<-r.Context().Done()
}

func (s *sseServer) seen() (resumes, auth []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.resumes...), append([]string(nil), s.auth...)
}

// collect ranges over Events until it has n events or an error.
func collect(ctx context.Context, c *Client, after int64, n int) ([]Event, error) {
	var got []Event
	for ev, err := range c.Events(ctx, "s1", after) {
		if err != nil {
			return got, err
		}
		got = append(got, ev)
		if len(got) == n {
			break
		}
	}
	return got, nil
}

func TestEventsReconnect(t *testing.T) {
	for _, crlf := range []bool{false, true} {
		t.Run(fmt.Sprintf("crlf=%v", crlf), func(t *testing.T) {
			log := sessionLog()
			srv := &sseServer{events: log, perConn: 3, crlf: crlf}
			c := serve(t, srv, fast)
			got, err := collect(context.Background(), c, 0, len(log))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(log, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			resumes, auth := srv.seen()
			wantResumes := []string{"", strconv.Itoa(1<<20 | 2), strconv.Itoa(4 << 20)}
			if diff := cmp.Diff(wantResumes, resumes); diff != "" {
				t.Errorf("Last-Event-ID of each connection (-want +got):\n%s", diff)
			}
			for _, a := range auth {
				if a != "Bearer tok" {
					t.Errorf("Authorization %q on a connection, want Bearer tok", a)
				}
			}
		})
	}
}

func TestEventsResumeFrom(t *testing.T) {
	log := sessionLog()
	srv := &sseServer{events: log, perConn: 100}
	c := serve(t, srv, fast)
	got, err := collect(context.Background(), c, 2<<20, 3)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(log[4:7], got); diff != "" {
		t.Errorf("events after 2<<20 (-want +got):\n%s", diff)
	}
	if resumes, _ := srv.seen(); !cmp.Equal(resumes, []string{strconv.Itoa(2 << 20)}) {
		t.Errorf("Last-Event-ID %q, want the afterID", resumes)
	}
}

// TestEventsDuplicates: a server that resends what the client has seen
// (ignoring Last-Event-ID) does not make the consumer see it twice.
func TestEventsDuplicates(t *testing.T) {
	log := sessionLog()
	n := 0
	var mu sync.Mutex
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		upto := min(n*3, len(log))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range log[:upto] {
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Type, strings.ReplaceAll(string(ev.Data), "\n", "\ndata: "))
		}
	})
	c := serve(t, h, fast)
	got, err := collect(context.Background(), c, 0, len(log))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(log, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestEventsTransientFailure(t *testing.T) {
	log := sessionLog()
	srv := &sseServer{events: log, perConn: 100}
	calls := 0
	var mu sync.Mutex
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		first := calls <= 2
		mu.Unlock()
		if first {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"title":"Service Unavailable","status":503,"detail":"restarting"}`)
			return
		}
		srv.ServeHTTP(w, r)
	})
	c := serve(t, h, fast)
	got, err := collect(context.Background(), c, 0, len(log))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(log, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestEventsFailures(t *testing.T) {
	problem := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"status":%d,"detail":"d"}`, status)
		}
	}
	tests := []struct {
		name  string
		h     http.HandlerFunc
		calls int
		check func(error) bool
	}{{
		name: "unknown session", h: problem(404), calls: 1,
		check: func(err error) bool { return errors.Is(err, ErrNotFound) },
	}, {
		name: "bad credentials", h: problem(401), calls: 1,
		check: func(err error) bool { return errors.Is(err, ErrUnauthorized) },
	}, {
		name: "server down for good", h: problem(503), calls: 3, // MaxReconnects 2: the first try and 2 more
		check: func(err error) bool {
			var e *Error
			return errors.As(err, &e) && e.Status == 503 && strings.Contains(err.Error(), "giving up after 3")
		},
	}, {
		name: "not an event stream", calls: 1,
		h: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>login</html>")
		},
		check: func(err error) bool { return strings.Contains(err.Error(), "not text/event-stream") },
	}, {
		name: "streams that end at once", calls: 3,
		h: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
		},
		check: func(err error) bool { return errors.Is(err, errStreamEnded) },
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			calls := 0
			opts := fast
			opts.MaxReconnects = 2
			c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				calls++
				mu.Unlock()
				tt.h(w, r)
			}), opts)
			var errs []error
			for ev, err := range c.Events(context.Background(), "s1", 0) {
				if err == nil {
					t.Fatalf("unexpected event %+v", ev)
				}
				errs = append(errs, err)
			}
			if len(errs) != 1 || !tt.check(errs[0]) {
				t.Errorf("errors %v, want one that matches", errs)
			}
			mu.Lock()
			defer mu.Unlock()
			if calls != tt.calls {
				t.Errorf("%d connections, want %d", calls, tt.calls)
			}
		})
	}
}

func TestEventsCancel(t *testing.T) {
	srv := &sseServer{events: sessionLog()[:1], perConn: 100}
	c := serve(t, srv, fast)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []Event
	var last error
	for ev, err := range c.Events(ctx, "s1", 0) {
		if err != nil {
			last = err
			continue
		}
		got = append(got, ev)
		cancel() // the stream is now idle, waiting for more
	}
	if len(got) != 1 || !errors.Is(last, context.Canceled) {
		t.Errorf("got %d events and error %v, want 1 and context.Canceled", len(got), last)
	}
}

func TestWait(t *testing.T) {
	var mu sync.Mutex
	gets := 0
	statuses := []string{"queued", "running", "running", "completed"}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path != "/runs/r1" {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(404)
			io.WriteString(w, `{"status":404,"detail":"no run"}`)
			return
		}
		gets++
		if gets == 2 {
			w.WriteHeader(http.StatusBadGateway) // a transient failure on the way
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(api.Run{ID: "r1", SessionID: "s1", Status: statuses[min(gets-1, len(statuses)-1)], Reason: "completed"})
	})
	c := serve(t, h, fast)
	run, err := c.Wait(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if run.Status != "completed" || gets != 4 {
		t.Errorf("run %+v after %d looks, want completed after 4", run, gets)
	}
	mu.Unlock()
	if _, err := c.Wait(context.Background(), "r2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown run: %v, want ErrNotFound", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Wait(ctx, "r1"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

func TestFinal(t *testing.T) {
	for s, want := range map[string]bool{"queued": false, "running": false, "completed": true, "failed": true,
		"cancelled": true, "interrupted": true, "": false} {
		if Final(s) != want {
			t.Errorf("Final(%q) = %v", s, !want)
		}
	}
}
