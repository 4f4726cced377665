package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/agent"
)

// cutAfter is how many events the browser's first connection carries
// before the test's proxy breaks it.
const cutAfter = 4

// browserPage posts a message to the session and reads its events with
// EventSource, then reports every event it got to /report. It listens to
// every event type rein sends; "error" is also the EventSource's own event
// for a broken connection, which carries no data and is not recorded.
var browserPage = template.Must(template.New("page").Parse(`<!doctype html>
<meta charset="utf-8"><title>rein events</title>
<script>
const sid = {{.Session}}, types = {{.Types}};
const got = [];
let opens = 0, drops = 0;
function report(r) {
  fetch("/report", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(r)});
}
const es = new EventSource("/sessions/" + sid + "/events");
es.onopen = () => {
  if (++opens > 1) return;
  fetch("/sessions/" + sid + "/messages", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({text: "What is in the project?"})})
    .then(r => r.ok ? null : r.text().then(t => report({error: "POST message: " + r.status + " " + t})))
    .catch(e => report({error: "POST message: " + e}));
};
function onEvent(e) {
  if (!(e instanceof MessageEvent)) { drops++; return; }
  let d;
  try { d = JSON.parse(e.data); } catch (x) { report({error: "event " + e.lastEventId + ": data is not JSON: " + e.data}); return; }
  got.push({id: e.lastEventId, type: e.type, data_type: d.type});
  if (e.type === "done") {
    es.close();
    report({events: got, opens: opens, drops: drops});
  }
}
for (const t of types) es.addEventListener(t, onEvent);
</script>
`))

// browserReport is what the page reports.
type browserReport struct {
	Error  string `json:"error"`
	Events []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		DataType string `json:"data_type"`
	} `json:"events"`
	Opens int `json:"opens"`
	Drops int `json:"drops"`
}

// eventTypes are every event type of a run (docs/events.md).
var eventTypes = []agent.EventType{agent.EventRunStart, agent.EventTextDelta, agent.EventThinkingDelta,
	agent.EventToolStart, agent.EventToolEnd, agent.EventPermissionRequest, agent.EventPermissionDecision,
	agent.EventCompaction, agent.EventRetry, agent.EventUsage, agent.EventError, agent.EventMessage, agent.EventDone}

// API-2 in a real browser: headless Chromium's EventSource reads a run's
// events through a same-origin proxy that breaks the first connection
// after a few events. EventSource reconnects by itself, sending
// Last-Event-ID, in the middle of the run (its second model call waits for
// the reconnect); the events the page got are exactly the session's
// stream, with neither a gap nor a duplicate.
func TestServeBrowserEventSource_API2(t *testing.T) {
	chromium := findChromium(t)
	v := newVendor(t)
	second := v.hold(2)
	v.Enqueue(listTurns...)
	in := newInstance(t, v)
	s := in.start()
	sid := s.session(in.project)
	p := newPageServer(t, s, sid, second)
	rep := p.browse(t, chromium)

	// The whole stream, as rein holds it after the run (deltas included,
	// while its bus keeps them).
	st := s.events(sid, 0)
	var want []string
	for _, e := range st.until("the run's done event", func(e sseEvent) bool { return e.Type == string(agent.EventDone) }) {
		want = append(want, strconv.FormatInt(e.ID, 10)+" "+e.Type)
	}
	var got []string
	for _, e := range rep.Events {
		got = append(got, e.ID+" "+e.Type)
		if e.DataType != e.Type {
			t.Errorf("event %s %s carries data of type %s", e.ID, e.Type, e.DataType)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the browser's events (-want +got):\n%s", d)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t.Logf("the browser got %d events over %d connections (%d drops); cut after id %s, resumed with Last-Event-ID %s",
		len(got), p.conns, rep.Drops, p.cutAt, p.resumedFrom)
	if rep.Opens < 2 || p.conns < 2 || p.cutAt == "" || p.resumedFrom != p.cutAt {
		t.Errorf("the browser opened the stream %d times (%d connections), the cut was after id %q, "+
			"the reconnect sent Last-Event-ID %q: want a reconnect resuming after the cut",
			rep.Opens, p.conns, p.cutAt, p.resumedFrom)
	}
}

// pageServer serves the page and, on the same origin, proxies rein: it
// breaks the first connection to the event stream after cutAfter events
// and lets the run's held model call go once the second one is open.
type pageServer struct {
	url     string
	reports chan browserReport

	mu                 sync.Mutex
	conns              int    // connections to the event stream
	cutAt, resumedFrom string // the last event id of the first, the Last-Event-ID of the second
}

func newPageServer(t *testing.T, s *served, sid string, second *held) *pageServer {
	t.Helper()
	target, err := url.Parse(s.base)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	proxy.ErrorLog = log.New(io.Discard, "", 0) // the cut is on purpose
	p := &pageServer{reports: make(chan browserReport, 1)}
	var page bytes.Buffer
	if err := browserPage.Execute(&page, map[string]any{"Session": sid, "Types": eventTypes}); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page.Bytes())
	})
	mux.HandleFunc("POST /report", func(w http.ResponseWriter, r *http.Request) {
		var rep browserReport
		if err := json.NewDecoder(r.Body).Decode(&rep); err != nil {
			rep.Error = "report: " + err.Error()
		}
		select {
		case p.reports <- rep:
		default:
		}
	})
	mux.HandleFunc("GET /sessions/{id}/events", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.conns++
		n := p.conns
		if n == 2 {
			p.resumedFrom = r.Header.Get("Last-Event-ID")
		}
		p.mu.Unlock()
		switch n {
		case 1:
			c := &cutter{w: w, after: cutAfter}
			defer func() {
				p.mu.Lock()
				p.cutAt = c.lastID
				p.mu.Unlock()
			}()
			proxy.ServeHTTP(c, r)
		case 2:
			// Let the run go on once rein has the new subscription (it
			// answers the headers after subscribing): the rest arrives live.
			proxy.ServeHTTP(&onHeader{ResponseWriter: w, fn: second.let}, r)
		default:
			proxy.ServeHTTP(w, r)
		}
	})
	mux.Handle("/sessions/", proxy)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	p.url = ts.URL + "/"
	return p
}

// browse opens the page in headless Chromium and returns its report.
func (p *pageServer) browse(t *testing.T, chromium string) browserReport {
	t.Helper()
	rep := browse(t, chromium, "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", p.url, p.reports, func() string {
		p.mu.Lock()
		defer p.mu.Unlock()
		return fmt.Sprintf("%d connections to the event stream", p.conns)
	})
	if rep.Error != "" {
		t.Fatalf("the page: %s", rep.Error)
	}
	return rep
}

// errCut breaks a proxied stream on purpose.
var errCut = errors.New("stream cut by the test")

// cutter passes an event stream through whole frames at a time and fails
// the write after the after-th event, so the reverse proxy aborts the
// connection (http.ErrAbortHandler) as a network failure would.
type cutter struct {
	w      http.ResponseWriter
	after  int
	events int
	buf    []byte
	lastID string
}

func (c *cutter) Header() http.Header { return c.w.Header() }

func (c *cutter) WriteHeader(code int) { c.w.WriteHeader(code) }

func (c *cutter) Write(p []byte) (int, error) {
	if c.events >= c.after {
		return 0, errCut
	}
	c.buf = append(c.buf, p...)
	for {
		i := bytes.Index(c.buf, []byte("\n\n"))
		if i < 0 {
			break
		}
		frame := c.buf[:i+2]
		if _, err := c.w.Write(frame); err != nil {
			return 0, err
		}
		if id, ok := bytes.CutPrefix(frame, []byte("id: ")); ok {
			c.events++
			c.lastID = string(id[:bytes.IndexByte(id, '\n')])
		}
		c.buf = c.buf[i+2:]
		if c.events >= c.after {
			c.Flush()
			return 0, errCut
		}
	}
	c.Flush()
	return len(p), nil
}

// Flush implements http.Flusher.
func (c *cutter) Flush() { _ = http.NewResponseController(c.w).Flush() }

// onHeader calls fn once the status is written.
type onHeader struct {
	http.ResponseWriter
	fn   func()
	once sync.Once
}

func (o *onHeader) WriteHeader(code int) {
	o.ResponseWriter.WriteHeader(code)
	o.once.Do(o.fn)
}

func (o *onHeader) Write(p []byte) (int, error) {
	o.once.Do(o.fn)
	return o.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the flusher.
func (o *onHeader) Unwrap() http.ResponseWriter { return o.ResponseWriter }
