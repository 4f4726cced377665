package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/server"
	"github.com/reinhq/rein/session"
)

// frame is one SSE frame as a client reads it.
type frame struct {
	ID      int64
	Event   string
	Data    string
	Comment string
}

// stream is an open event stream.
type stream struct {
	res    *http.Response
	r      *bufio.Reader
	cancel context.CancelFunc
}

// events opens the session's stream; hdr are header name/value pairs.
func (e *env) events(t testing.TB, sessionID, tok, query string, hdr ...string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(bg)
	req := newRequest(t, "GET", e.ts.URL+"/sessions/"+sessionID+"/events"+query, tok, nil, hdr...).WithContext(ctx)
	res, err := e.ts.Client().Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		defer cancel()
		t.Fatalf("events: %d %s", res.StatusCode, readAll(t, res))
	}
	s := &stream{res: res, r: bufio.NewReader(res.Body), cancel: cancel}
	t.Cleanup(s.close)
	return s
}

func (s *stream) close() {
	s.cancel()
	s.res.Body.Close()
}

// next reads the next frame, comments included.
func (s *stream) next(t testing.TB) frame {
	t.Helper()
	var f frame
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v (partial %q)", err, line)
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			return f
		}
		field, value, _ := strings.Cut(line, ": ")
		switch field {
		case "":
			f.Comment = value
		case "id":
			id, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				t.Fatalf("id %q", value)
			}
			f.ID = id
		case "event":
			f.Event = value
		case "data":
			if f.Data != "" {
				t.Fatalf("two data lines in one frame: %q, %q", f.Data, value)
			}
			f.Data = value
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
}

// nextEvents reads n events, skipping heartbeats.
func (s *stream) nextEvents(t testing.TB, n int) []frame {
	t.Helper()
	var out []frame
	for len(out) < n {
		if f := s.next(t); f.Comment == "" {
			out = append(out, f)
		}
	}
	return out
}

// publish publishes an agent event of the session with the id; a durable
// one is stored in the ledger first, as the runner does. It returns the
// frame a client should read.
func (e *env) publish(t testing.TB, sessionID string, id int64, typ agent.EventType) frame {
	t.Helper()
	f := e.stored(t, sessionID, id, typ)
	if err := e.bus.Publish(bg, eventbus.Event{SessionID: sessionID, ID: id, RunID: "r1", Type: string(typ), Durable: typ.Durable(), Data: []byte(f.Data)}); err != nil {
		t.Fatal(err)
	}
	return f
}

// stored appends a durable event to the ledger only (deltas are not
// stored) and returns its frame.
func (e *env) stored(t testing.TB, sessionID string, id int64, typ agent.EventType) frame {
	t.Helper()
	ev := agent.Event{Type: typ, Time: time.Date(2026, 11, 21, 7, 0, 0, 0, time.UTC), SessionID: sessionID, RunID: "r1", Text: fmt.Sprint(id)}
	data, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if typ.Durable() {
		if err := e.ledger.AppendEvents(bg, session.Event{SessionID: sessionID, ID: id, RunID: "r1", Type: string(typ), Time: ev.Time, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	return frame{ID: id, Event: string(typ), Data: string(data)}
}

const d = 1 << 20 // the id step of durable events

func TestEventsFraming(t *testing.T) {
	var gauge atomic.Int64
	e := newEnv(t, func(c *server.Config) { c.OnSSE = func(n int) { gauge.Add(int64(n)) } })
	f := e.fixture(t, "ada")
	s := e.events(t, f.session, f.tok, "")
	if ct, cc := s.res.Header.Get("Content-Type"), s.res.Header.Get("Cache-Control"); ct != "text/event-stream" || cc != "no-cache" {
		t.Errorf("headers: Content-Type %q, Cache-Control %q", ct, cc)
	}
	if gauge.Load() != 1 {
		t.Errorf("gauge %d with one client", gauge.Load())
	}
	msg := e.publish(t, f.session, d, agent.EventMessage)
	delta := e.publish(t, f.session, d+1, agent.EventTextDelta)
	// Data with line breaks is sent on one line.
	pretty := "{\n  \"type\": \"text_delta\",\n  \"text\": \"a\\nb\"\n}"
	if err := e.bus.Publish(bg, eventbus.Event{SessionID: f.session, ID: d + 2, Type: "text_delta", Data: []byte(pretty)}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("id: %d\nevent: message\ndata: %s\n\nid: %d\nevent: text_delta\ndata: %s\n\nid: %d\nevent: text_delta\ndata: %s\n\n",
		d, msg.Data, d+1, delta.Data, d+2, `{"type":"text_delta","text":"a\nb"}`)
	got := make([]byte, len(want))
	if _, err := io.ReadFull(s.r, got); err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("stream:\n%s\nwant:\n%s", got, want)
	}
	// A client that left is found by the next writes (events, or the
	// heartbeat at the latest): the stream ends and the gauge goes back to
	// zero.
	s.close()
	for id, deadline := int64(2*d), time.Now().Add(20*time.Second); gauge.Load() != 0; id++ {
		if time.Now().After(deadline) {
			t.Fatalf("gauge %d long after the client left", gauge.Load())
		}
		e.publish(t, f.session, id, agent.EventTextDelta)
		time.Sleep(5 * time.Millisecond)
	}
}

func TestEventsResume(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t, "ada")
	var all []frame
	for i, typ := range []agent.EventType{agent.EventRunStart, agent.EventMessage, agent.EventTextDelta, agent.EventTextDelta, agent.EventToolStart} {
		all = append(all, e.publish(t, f.session, int64(i+1), typ))
	}
	for _, tc := range []struct {
		name  string
		query string
		hdr   []string
		from  int // index into all of the first event expected
	}{
		{"Last-Event-ID", "", []string{"Last-Event-ID", "3"}, 3},
		{"after", "?after=2", nil, 2},
		{"the header wins", "?after=1", []string{"Last-Event-ID", "4"}, 4},
		{"from the start", "", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := e.events(t, f.session, f.tok, tc.query, tc.hdr...)
			if d := cmp.Diff(all[tc.from:], s.nextEvents(t, len(all)-tc.from)); d != "" {
				t.Errorf("replay (-want +got):\n%s", d)
			}
			s.close()
		})
	}
	// A live event follows the replay.
	s := e.events(t, f.session, f.tok, "", "Last-Event-ID", "5")
	live := e.publish(t, f.session, 6, agent.EventDone)
	if d := cmp.Diff([]frame{live}, s.nextEvents(t, 1)); d != "" {
		t.Errorf("live (-want +got):\n%s", d)
	}
}

// TestEventsGap resumes after events the bus's window no longer holds: the
// durable ones come from the ledger, then the window, with neither a gap of
// durable events nor a duplicate.
func TestEventsGap(t *testing.T) {
	e := newEnvBus(t, eventbus.Options{Window: 3})
	f := e.fixture(t, "ada")
	types := map[int64]agent.EventType{
		d: agent.EventMessage, d + 1: agent.EventTextDelta, d + 2: agent.EventTextDelta,
		2 * d: agent.EventToolStart, 2*d + 1: agent.EventTextDelta,
		3 * d: agent.EventToolEnd, 3*d + 1: agent.EventTextDelta, 3*d + 2: agent.EventTextDelta,
	}
	frames := map[int64]frame{}
	for _, id := range []int64{d, d + 1, d + 2, 2 * d, 2*d + 1, 3 * d, 3*d + 1, 3*d + 2} {
		frames[id] = e.publish(t, f.session, id, types[id])
	}
	// The window holds 3d, 3d+1, 3d+2; after d, the ledger has 2d; the
	// deltas d+1, d+2, 2d+1 are lost.
	s := e.events(t, f.session, f.tok, "", "Last-Event-ID", strconv.Itoa(d))
	want := []frame{frames[2*d], frames[3*d], frames[3*d+1], frames[3*d+2]}
	if diff := cmp.Diff(want, s.nextEvents(t, len(want))); diff != "" {
		t.Errorf("resume (-want +got):\n%s", diff)
	}
	live := e.publish(t, f.session, 4*d, agent.EventDone)
	if diff := cmp.Diff([]frame{live}, s.nextEvents(t, 1)); diff != "" {
		t.Errorf("live (-want +got):\n%s", diff)
	}
}

// TestEventsGapUnknown resumes on a bus that holds nothing of the session
// (it restarted): everything stored comes from the ledger, and what the bus
// then delivers again is not sent twice.
func TestEventsGapUnknown(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t, "ada")
	var stored []frame
	for i, typ := range []agent.EventType{agent.EventMessage, agent.EventToolStart, agent.EventToolEnd} {
		stored = append(stored, e.stored(t, f.session, int64(i+1)*d, typ))
	}
	s := e.events(t, f.session, f.tok, "?after="+strconv.Itoa(d))
	if diff := cmp.Diff(stored[1:], s.nextEvents(t, 2)); diff != "" {
		t.Errorf("from the ledger (-want +got):\n%s", diff)
	}
	// The runner publishes 3d (already sent from the ledger), then 3d+1.
	if err := e.bus.Publish(bg, eventbus.Event{SessionID: f.session, ID: 3 * d, Type: "tool_end", Durable: true, Data: []byte(stored[2].Data)}); err != nil {
		t.Fatal(err)
	}
	next := e.publish(t, f.session, 3*d+1, agent.EventTextDelta)
	if diff := cmp.Diff([]frame{next}, s.nextEvents(t, 1)); diff != "" {
		t.Errorf("after the replay (-want +got):\n%s", diff)
	}
}

func TestEventsHeartbeat(t *testing.T) {
	e := newEnv(t, func(c *server.Config) { c.Heartbeat = time.Millisecond })
	f := e.fixture(t, "ada")
	s := e.events(t, f.session, f.tok, "")
	if got := s.next(t); got != (frame{Comment: "ping"}) {
		t.Errorf("first frame %+v, want the heartbeat", got)
	}
}

// TestEventsStreamEndsWithSubscription: when the bus ends the subscription
// (here: it closes; a slow client is cut off the same way) the response
// ends, and the client reconnects.
func TestEventsStreamEndsWithSubscription(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t, "ada")
	s := e.events(t, f.session, f.tok, "")
	if err := e.bus.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(s.r); err != nil || len(b) != 0 {
		t.Errorf("after the bus closed: %q, %v; want the end of the stream", b, err)
	}
}

// TestCloseStreams: a graceful shutdown ends idle streams at once, and
// streams opened after it end as soon as they start.
func TestCloseStreams(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t, "ada")
	s := e.events(t, f.session, f.tok, "")
	e.srv.CloseStreams()
	if b, err := io.ReadAll(s.r); err != nil || len(b) != 0 {
		t.Errorf("after CloseStreams: %q, %v; want the end of the stream", b, err)
	}
	later := e.events(t, f.session, f.tok, "")
	if b, err := io.ReadAll(later.r); err != nil || len(b) != 0 {
		t.Errorf("a stream opened after CloseStreams: %q, %v", b, err)
	}
}

// TestEndStreamsWritesDelivered_API5: at a graceful shutdown, what the
// bus delivered to a stream before (a run's last events) is written before
// the stream ends, and EndStreams returns only once every stream ended (a
// process exits after it) — with a bus that notifies (parked streams) and
// one that does not (eventbus/redisbus).
func TestEndStreamsWritesDelivered_API5(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  func(*server.Config)
	}{
		{"parked", func(*server.Config) {}},
		{"pumped", func(c *server.Config) { c.Bus = plainBus{c.Bus.(*eventbus.Memory)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for round := range 20 {
				e := newEnv(t, tc.opt)
				f := e.fixture(t, "ada")
				s := e.events(t, f.session, f.tok, "")
				var want []frame
				for id := int64(1); id <= 3; id++ {
					want = append(want, e.publish(t, f.session, id, agent.EventMessage))
				}
				ctx, cancel := context.WithTimeout(bg, 10*time.Second)
				err := e.srv.EndStreams(ctx)
				cancel()
				if err != nil {
					t.Fatalf("round %d: EndStreams: %v", round, err)
				}
				if n := e.bus.Subscribers(); n != 0 {
					t.Fatalf("round %d: %d subscriptions open when EndStreams returned", round, n)
				}
				if got := s.nextEvents(t, len(want)); !reflect.DeepEqual(got, want) {
					t.Fatalf("round %d: events %+v, want %+v", round, got, want)
				}
				if b, err := io.ReadAll(s.r); err != nil || len(b) != 0 {
					t.Fatalf("round %d: after the events: %q, %v; want the end of the stream", round, b, err)
				}
			}
		})
	}
}

// TestEndStreamsSlowClient_API5: a stream whose client reads slowly at a
// graceful shutdown (its socket full, the rest of a batch held) still
// writes everything the bus delivered before the close, the last event
// included.
func TestEndStreamsSlowClient_API5(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t, "ada")
	s := e.events(t, f.session, f.tok, "")
	big := []byte(`{"type":"text_delta","text":"` + strings.Repeat("x", 64<<10) + `"}`)
	const n = 200 // 12.5 MiB: more than the socket buffers hold
	for i := range n {
		if err := e.bus.Publish(bg, eventbus.Event{SessionID: f.session, ID: int64(i + 1), Type: "text_delta", Data: big}); err != nil {
			t.Fatal(err)
		}
	}
	last := e.publish(t, f.session, n+1, agent.EventDone)
	ended := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(bg, 20*time.Second)
		defer cancel()
		ended <- e.srv.EndStreams(ctx)
	}()
	select {
	case err := <-ended:
		t.Fatalf("EndStreams returned (%v) while the client had read nothing", err)
	case <-time.After(100 * time.Millisecond):
	}
	got := s.nextEvents(t, n+1)
	if g := got[n]; g != last {
		t.Errorf("the last event: %+v, want %+v", g, last)
	}
	for i, g := range got[:n] {
		if g.ID != int64(i+1) {
			t.Fatalf("event %d has id %d", i+1, g.ID)
		}
	}
	if b, err := io.ReadAll(s.r); err != nil || len(b) != 0 {
		t.Errorf("after the events: %q, %v; want the end of the stream", b, err)
	}
	if err := <-ended; err != nil {
		t.Errorf("EndStreams: %v", err)
	}
}

// stalledStream opens the session's stream on a connection of its own,
// reads the response's head and then nothing more; the connection closes
// when the test ends.
func stalledStream(t *testing.T, e *env, sessionID, tok string) {
	t.Helper()
	conn, err := net.Dial("tcp", e.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET /sessions/%s/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n", sessionID, tok)
	br := bufio.NewReader(conn)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\r\n" {
			return
		}
	}
}

// TestEndStreamsStalledClient_API5: a client that stops reading cannot
// hold a shutdown: EndStreams gives up at its deadline with the stream's
// write still waiting, and the other streams have ended.
func TestEndStreamsStalledClient_API5(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t, "ada")
	stalledStream(t, e, f.session, f.tok)
	g := e.fixture(t, "bob")
	other := e.events(t, g.session, g.tok, "")
	big := []byte(`{"type":"text_delta","text":"` + strings.Repeat("x", 64<<10) + `"}`)
	for i := range 200 { // 12.5 MiB: more than the socket buffers hold
		if err := e.bus.Publish(bg, eventbus.Event{SessionID: f.session, ID: int64(i + 1), Type: "text_delta", Data: big}); err != nil {
			t.Fatal(err)
		}
	}
	go func() { _, _ = io.Copy(io.Discard, other.r) }()
	ctx, cancel := context.WithTimeout(bg, 300*time.Millisecond)
	defer cancel()
	if err := e.srv.EndStreams(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("EndStreams with a stalled client: %v, want the deadline's error", err)
	}
	if n := e.bus.Subscribers(); n != 1 {
		t.Errorf("%d subscriptions at the deadline, want the stalled client's alone", n)
	}
}

// TestEventsSlowClient: a client that stops reading never blocks the
// publisher; the bus cuts it off.
func TestEventsSlowClient(t *testing.T) {
	e := newEnvBus(t, eventbus.Options{Buffer: 4, Window: 8})
	f := e.fixture(t, "ada")
	stalledStream(t, e, f.session, f.tok)
	big := []byte(`{"type":"text_delta","text":"` + strings.Repeat("x", 64<<10) + `"}`)
	for i := range 400 { // 25 MiB: far more than the socket buffers hold
		if err := e.bus.Publish(bg, eventbus.Event{SessionID: f.session, ID: int64(i + 1), Type: "text_delta", Data: big}); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	if st := e.bus.Stats(); st.Slow != 1 {
		t.Errorf("%d subscriptions cut off, want the stalled client's", st.Slow)
	}
	// The server still serves, and a new client resumes from the window.
	s := e.events(t, f.session, f.tok, "", "Last-Event-ID", "399")
	if got := s.nextEvents(t, 1); got[0].ID != 400 {
		t.Errorf("resumed at %d, want 400", got[0].ID)
	}
}

func TestEventsForeignAndBadResume(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t, "ada")
	if r := e.request(t, "GET", "/sessions/"+f.session+"/events", token(t, "bob"), nil); r.status != http.StatusNotFound {
		t.Errorf("bob: %d", r.status)
	}
	for _, hdr := range [][]string{{"Last-Event-ID", "abc"}, {"Last-Event-ID", "-1"}} {
		r := e.do(t, "GET", "/sessions/"+f.session+"/events", f.tok, nil, hdr...)
		if r.status != http.StatusUnprocessableEntity {
			t.Errorf("%v: %d %s", hdr, r.status, r.body)
		}
	}
}
