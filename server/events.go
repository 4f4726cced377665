package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/eventbus"
)

// sseWriteTimeout bounds one write to an SSE client: a client whose
// connection stops taking bytes is dropped after it.
const sseWriteTimeout = 10 * time.Second

// replayPage is how many stored events a replay reads at a time.
const replayPage = 256

// batchBytes is how much a stream gathers before it writes: the events
// already waiting in its subscription are sent in one write up to it (a
// run's deltas come in bursts, and a client woken late finds several), and
// a replay writes a page at a time or this much.
const batchBytes = 32 << 10

type eventsInput struct {
	ID          string `path:"id" maxLength:"128" pattern:"^[A-Za-z0-9_-][A-Za-z0-9._-]*$" doc:"Session id."`
	LastEventID int64  `header:"Last-Event-ID" minimum:"0" doc:"Resume after this event id (browsers send it when they reconnect)."`
	After       int64  `query:"after" minimum:"0" doc:"Resume after this event id, for clients that cannot set Last-Event-ID; the header wins."`
}

// eventsDoc describes the stream in the OpenAPI document.
const eventsDoc = "The session's event stream (SPEC API-2), open until the client closes it — it outlives runs. Each event is\n\n" +
	"    id: <int64>\n    event: <type>\n    data: <the event's JSON on one line, as in docs/events.md>\n\n" +
	"Ids increase within the session. Reconnecting with Last-Event-ID: N (or ?after=N) sends the events after N that are " +
	"still known: every durable one (message, tool_start, tool_end, question, compaction, subagent_end, done), deltas while the server still " +
	"holds them. A comment line `: ping` arrives every heartbeat. A client too slow to keep up is disconnected; it " +
	"reconnects with Last-Event-ID. Disconnecting never cancels a run.\n\n" +
	"A caller holds a bounded number of open streams, the server too (429 with Retry-After beyond; the problem names " +
	"the cap). A stream opened with a token ends when the token expires (exp, plus 30 s for clock skew) with a last " +
	"comment `: credential expired: …`; the client reconnects with a fresh token and Last-Event-ID. A page of another " +
	"origin than the server's own or an allowed one cannot open a stream (403)."

func (s *Server) registerEvents() {
	op := s.operation(http.MethodGet, "/sessions/{id}/events", "session-events", "Stream a session's events (SSE)", http.StatusOK, http.StatusNotFound)
	op.Tags = []string{"events"}
	op.Description = eventsDoc
	op.Responses = map[string]*huma.Response{"200": {Description: "Server-Sent Events.", Content: map[string]*huma.MediaType{
		"text/event-stream": {Schema: s.eventSchema()},
	}}}
	huma.Register(s.api, op, s.sessionEvents)
}

// eventSchema describes the stream's frames (SPEC API-1): one of a frame
// per event type, told apart by its event line (the discriminator), each
// with the schema of its data (api.EventTypes), registered as components
// named after the event ("EventRunStart" for the frame, "RunStartEvent"
// for its data).
func (s *Server) eventSchema() *huma.Schema {
	reg := s.api.OpenAPI().Components.Schemas
	names := slices.Sorted(maps.Keys(api.EventTypes))
	one := make([]*huma.Schema, 0, len(names))
	mapping := make(map[string]string, len(names))
	for _, name := range names {
		data := reg.Schema(reflect.TypeOf(api.EventTypes[name]), true, "")
		frame := &huma.Schema{Type: huma.TypeObject, Description: "A " + name + " event (docs/events.md).",
			Properties: map[string]*huma.Schema{
				"id":    {Type: huma.TypeInteger, Format: "int64", Description: "The event's id in the session: durable << 20 | delta (docs/events.md)."},
				"event": {Type: huma.TypeString, Enum: []any{name}, Description: "The event's type: " + name + "."},
				"data":  data,
			},
			Required: []string{"id", "event", "data"}}
		key := "Event" + camel(name)
		reg.Map()[key] = frame
		ref := "#/components/schemas/" + key
		one = append(one, &huma.Schema{Ref: ref})
		mapping[name] = ref
	}
	return &huma.Schema{Description: "Frames of id, event and data lines; data is the event's JSON on one line (docs/events.md). " +
		"The event line names the type.", OneOf: one, Discriminator: &huma.Discriminator{PropertyName: "event", Mapping: mapping}}
}

// camel turns an event type into a schema name: run_start → RunStart.
func camel(s string) string {
	var b strings.Builder
	for _, part := range strings.Split(s, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

func (s *Server) sessionEvents(ctx context.Context, in *eventsInput) (*huma.StreamResponse, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := s.ownSession(ctx, c, in.ID); err != nil {
		return nil, err
	}
	after := in.After
	if in.LastEventID > 0 {
		after = in.LastEventID
	}
	release, err := s.streams.acquire(c)
	if err != nil {
		return nil, err
	}
	// The subscription outlives the request's context: an idle stream may
	// be handed to a goroutine of its own (see detach).
	sub, err := s.cfg.Bus.Subscribe(context.WithoutCancel(ctx), in.ID, after)
	if err != nil {
		release()
		return nil, s.fail(ctx, "subscribing to the session's events", err)
	}
	st := &eventStream{sessionID: in.ID, caller: c, after: after, sub: sub, until: credentialOf(ctx).Until, release: release}
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		if s.detach(hctx, st) {
			return
		}
		defer st.end()
		s.stream(hctx, st)
	}}, nil
}

// eventStream is one client's stream of a session's events.
type eventStream struct {
	sessionID string
	caller    string
	after     int64 // the last event id the client has
	sub       eventbus.Subscription
	// until is when the credential that opened the stream stops holding
	// (SPEC API-9): the stream ends then, and the client reconnects with a
	// fresh one. Zero: never.
	until time.Time
	// release gives the stream's slot back to the caps.
	release func()
}

// end closes the subscription and frees the stream's slot.
func (st *eventStream) end() {
	st.sub.Close()
	st.release()
}

// detach serves the stream over the hijacked HTTP/1.1 connection, so the
// request's handler returns: an idle client then costs its subscription,
// its socket and a small record (see parkedStream) — or a small goroutine
// when the bus cannot notify — not net/http's handler and reader
// goroutines and buffers (10,000 idle clients, bench/server). The
// response is delimited by closing the connection. It reports false,
// having written nothing, when the connection cannot be hijacked
// (HTTP/2); the caller then streams in the handler.
func (s *Server) detach(hctx huma.Context, st *eventStream) bool {
	r, w := humago.Unwrap(hctx)
	if r.ProtoMajor != 1 {
		return false
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	h := w.Header().Clone()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("Connection", "close")
	sw := &sseWriter{out: conn, setDeadline: conn.SetWriteDeadline, left: func() bool { return clientLeft(conn) }}
	sw.buf.WriteString("HTTP/1.1 200 OK\r\n")
	_ = h.Write(&sw.buf)
	sw.buf.WriteString("\r\n")
	go func() {
		if s.cfg.OnSSE != nil {
			s.cfg.OnSSE(1)
		}
		end := func() {
			conn.Close()
			st.end()
			if s.cfg.OnSSE != nil {
				s.cfg.OnSSE(-1)
			}
		}
		if sw.write() != nil {
			end()
			return
		}
		// No request context now: the stream ends when a write fails (a
		// client that left is found by the next heartbeat at the latest),
		// when the bus drops the subscription, on CloseStreams, or when
		// its credential expires.
		ctx := context.Background()
		last, ok := s.catchUp(ctx, sw, st)
		if !ok {
			end()
			return
		}
		if n, ok := st.sub.(eventbus.Notifier); ok {
			s.park(st, n, conn, sw, last)
			return
		}
		defer end()
		s.pump(ctx, sw, st, last)
	}()
	return true
}

// stream writes the session's events in the request's handler (a
// connection that cannot be hijacked): see pump.
func (s *Server) stream(hctx huma.Context, st *eventStream) {
	ctx := hctx.Context()
	_, w := humago.Unwrap(hctx)
	if s.cfg.OnSSE != nil {
		s.cfg.OnSSE(1)
		defer s.cfg.OnSSE(-1)
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	hctx.SetStatus(http.StatusOK)
	rc := http.NewResponseController(w)
	sw := &sseWriter{out: w, flush: rc.Flush, setDeadline: rc.SetWriteDeadline}
	if rc.Flush() != nil { // the headers, before any event
		return
	}
	if last, ok := s.catchUp(ctx, sw, st); ok {
		s.pump(ctx, sw, st, last)
	}
}

// probeWait is how long a heartbeat waits to learn whether the client of
// a hijacked connection closed it.
const probeWait = time.Millisecond

// clientLeft reports whether the client closed its end of conn: a read
// finds the end (or fails) within probeWait. A write to a connection the
// client closed succeeds once (its answer is a reset), so a heartbeat
// alone notices a departed client only at the one after; reading notices
// it at the first, and its stream's memory is freed 15 s sooner. A client
// that shuts down its sending side counts as gone, as net/http's own
// background read takes it for a request it still serves. A byte the
// client sent is read and dropped: nothing more is read from an event
// stream's request.
func clientLeft(conn net.Conn) bool {
	if conn.SetReadDeadline(time.Now().Add(probeWait)) != nil {
		return false
	}
	var b [1]byte
	_, err := conn.Read(b[:])
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// expiredComment is the last line of a stream whose credential expired.
const expiredComment = "credential expired: reconnect with a fresh token and Last-Event-ID"

// catchUp sends the stored events the bus no longer holds (ids after
// st.after up to the subscription's gap) and returns the id of the last
// event sent; ok is false when the stream is over (a write or the ledger
// failed).
func (s *Server) catchUp(ctx context.Context, sw *sseWriter, st *eventStream) (last int64, ok bool) {
	last = st.after
	if gap := st.sub.Gap(); gap > st.after {
		var err error
		if last, err = s.replay(ctx, sw, st.sessionID, st.after, gap); err != nil {
			if ctx.Err() == nil {
				s.log.WarnContext(ctx, "sse: replaying stored events failed", "session_id", st.sessionID, "caller", st.caller, "err", err)
			}
			return last, false
		}
	}
	return last, true
}

// pump writes what the bus delivers after the id last, with heartbeats,
// from a goroutine of its own, until ctx ends, a write fails, the bus
// drops the subscription, the server closes its streams, or the stream's
// credential expires (a last comment says so).
func (s *Server) pump(ctx context.Context, sw *sseWriter, st *eventStream, last int64) {
	sessionID, sub := st.sessionID, st.sub
	var expired <-chan time.Time
	if !st.until.IsZero() {
		t := time.NewTimer(st.until.Sub(s.now()))
		defer t.Stop()
		expired = t.C
	}
	tick := time.NewTicker(s.cfg.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.closing:
			// What the bus delivered before (a run's done event) is
			// written first: select picks among ready cases at random.
			for {
				select {
				case ev, ok := <-sub.Events():
					if !ok {
						return
					}
					var end bool
					if last, end = s.batch(ctx, sw, st, ev, last); end {
						return
					}
				default:
					return
				}
			}
		case <-expired:
			_ = sw.comment(expiredComment)
			return
		case <-tick.C:
			if sw.comment("ping") != nil || (sw.left != nil && sw.left()) {
				return
			}
		case ev, ok := <-sub.Events():
			if !ok {
				if err := sub.Err(); err != nil && !errors.Is(err, eventbus.ErrSlow) && ctx.Err() == nil {
					s.log.WarnContext(ctx, "sse: subscription ended", "session_id", sessionID, "caller", st.caller, "err", err)
				}
				return // a slow client reconnects with Last-Event-ID
			}
			if !st.until.IsZero() && !s.now().Before(st.until) {
				_ = sw.comment(expiredComment) // the timer and the event were ready at once
				return
			}
			var end bool
			if last, end = s.batch(ctx, sw, st, ev, last); end {
				return
			}
		}
	}
}

// batch frames ev and the events already waiting after it in st's
// subscription (up to batchBytes), writes them in one go, and returns the
// id of the last one framed; end says a write failed. Events with ids up
// to last were sent from the store and are skipped. A subscription that
// ended yields nil here; pump's next receive finds why.
func (s *Server) batch(ctx context.Context, sw *sseWriter, st *eventStream, ev *eventbus.Event, last int64) (int64, bool) {
	for ev != nil {
		if ev.ID > last {
			s.frameEvent(ctx, sw, ev)
			last = ev.ID
		}
		ev = nil
		// The credential's end is checked by pump before each batch, and
		// again here before each event a batch takes on.
		if sw.buf.Len() < batchBytes && (st.until.IsZero() || s.now().Before(st.until)) {
			select {
			case ev = <-st.sub.Events():
			default:
			}
		}
	}
	return last, sw.write() != nil
}

// replay sends the stored events with after < id <= gap and returns the id
// of the last one sent (after when none). A page is written at once, or
// batchBytes of it.
func (s *Server) replay(ctx context.Context, sw *sseWriter, sessionID string, after, gap int64) (int64, error) {
	last := after
	for {
		evs, err := s.cfg.Ledger.Events(ctx, sessionID, last, replayPage)
		if err != nil {
			return last, err
		}
		for _, ev := range evs {
			if ev.ID > gap {
				return last, sw.write()
			}
			s.frame(ctx, sw, ev.ID, ev.Type, ev.Data)
			last = ev.ID
			if sw.buf.Len() >= batchBytes {
				if err := sw.write(); err != nil {
					return last, err
				}
			}
		}
		if err := sw.write(); err != nil || len(evs) < replayPage {
			return last, err
		}
	}
}

// frame adds one event to the writer's buffer; an event that cannot be
// framed (a type with a line break, data that is not JSON) is logged and
// skipped.
func (s *Server) frame(ctx context.Context, sw *sseWriter, id int64, typ string, data []byte) {
	if err := sw.event(id, typ, data); err != nil {
		s.log.WarnContext(ctx, "sse: event skipped", "event_id", id, "type", typ, "err", err)
	}
}

var errUnframeable = errors.New("event cannot be framed")

// sseWriter frames events on a response (or a hijacked connection): event
// adds a frame to the buffer, write sends the buffer and flushes it.
type sseWriter struct {
	out         io.Writer
	flush       func() error // nil: out is unbuffered
	setDeadline func(time.Time) error
	buf         bytes.Buffer
	// left, when set, reports whether the client closed the connection
	// (see clientLeft); heartbeats ask.
	left func() bool
	// deadline is the write deadline last set; it is moved on only when
	// less than sseWriteTimeout - deadlineSlack is left, not at every
	// write (each move is a timer change in the runtime).
	deadline time.Time
}

// deadlineSlack is how far a write's deadline may fall short of
// sseWriteTimeout: a stalled client is dropped after 9 to 10 s.
const deadlineSlack = time.Second

// event adds `id: N\nevent: T\ndata: JSON\n\n` to the buffer. Data holding a
// line break is compacted to one line; an error wraps errUnframeable and
// adds nothing.
func (sw *sseWriter) event(id int64, typ string, data []byte) error {
	if strings.ContainsAny(typ, "\r\n") {
		return errUnframeable
	}
	if bytes.ContainsAny(data, "\r\n") {
		var c bytes.Buffer
		if err := json.Compact(&c, data); err != nil {
			return errors.Join(errUnframeable, err)
		}
		data = c.Bytes()
	}
	sw.buf.WriteString("id: ")
	sw.buf.Write(strconv.AppendInt(sw.buf.AvailableBuffer(), id, 10))
	sw.buf.WriteString("\nevent: ")
	sw.buf.WriteString(typ)
	sw.buf.WriteString("\ndata: ")
	sw.buf.Write(data)
	sw.buf.WriteString("\n\n")
	return nil
}

// comment writes `: text\n\n` (a heartbeat), after what the buffer holds.
func (sw *sseWriter) comment(text string) error {
	sw.addComment(text)
	return sw.write()
}

// addComment adds `: text\n\n` to the buffer.
func (sw *sseWriter) addComment(text string) {
	sw.buf.WriteString(": ")
	sw.buf.WriteString(text)
	sw.buf.WriteString("\n\n")
}

// write sends the buffer, within sseWriteTimeout where the connection
// allows a deadline; an empty buffer sends nothing.
func (sw *sseWriter) write() error {
	if sw.buf.Len() == 0 {
		return nil
	}
	if now := time.Now(); sw.deadline.Sub(now) < sseWriteTimeout-deadlineSlack {
		sw.deadline = now.Add(sseWriteTimeout)
		_ = sw.setDeadline(sw.deadline)
	}
	if _, err := sw.out.Write(sw.buf.Bytes()); err != nil {
		return err
	}
	sw.buf.Reset()
	if sw.flush == nil {
		return nil
	}
	return sw.flush()
}
