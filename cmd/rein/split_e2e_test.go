package main

// The fault suite of the production split (SPEC API-5, issue 13): two
// `rein serve --mode api` processes and three `rein worker` processes of
// the built binary share a PostgreSQL and a Redis, each reached through a
// fault proxy (internal/faultproxy) the test cuts: the real services, which
// other tests use in parallel, are never stopped. Every case ends with a
// checker over the store, read through the HTTP API.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/internal/faultproxy"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/postgres/pgtest"
)

// splitWorkerSlots is each worker's --max-concurrent: with three workers,
// six sessions held at once must be spread over all of them.
const splitWorkerSlots = 2

// API-5 (issue 13): the split deployment's faults, on the real services
// from the built binary — steady state across processes; kill -9 of the
// worker holding a session mid-model-call and mid-tool; Redis away for a
// few seconds; PostgreSQL away and back; a worker paused past its lease
// whose late writes the store's fence refuses.
func TestSplitFaults_API5(t *testing.T) {
	redisURL := os.Getenv("REIN_TEST_REDIS_URL")
	if redisURL == "" || os.Getenv(pgtest.EnvURL) == "" {
		t.Skip("the split fault suite needs PostgreSQL and Redis: set " + pgtest.EnvURL +
			" (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) and REIN_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379/0)")
	}
	reinBinary(t)
	e := newSplit(t, redisURL)

	steady := func(t *testing.T) { e.steady(t) }
	cases := []struct {
		name     string
		run      func(t *testing.T)
		replaced bool // the case kills a worker: start another after it
	}{
		{"steady state", steady, false},
		{"kill -9 mid-model-call", func(t *testing.T) { e.killHolder(t, false) }, true},
		{"kill -9 mid-tool", func(t *testing.T) { e.killHolder(t, true) }, true},
		{"Redis away", e.redisAway, false},
		{"PostgreSQL away and back", e.postgresAway, false},
		{"a paused worker is fenced", e.pausedWorker, false},
	}
	for _, c := range cases {
		start := time.Now()
		ok := t.Run(c.name, func(t *testing.T) {
			e.bind(t)
			defer e.bind(e.top)
			c.run(t)
			e.check(t)
		})
		t.Logf("%s: %s", c.name, time.Since(start).Round(10*time.Millisecond))
		if !ok {
			return
		}
		if c.replaced {
			e.workers = append(e.workers, e.in.startWorker(e.workerArgs...))
		}
	}
}

// split is the deployment under test.
type split struct {
	top        *testing.T
	in         *instance
	v          *scriptVendor
	pg, rd     *faultproxy.Proxy
	workerArgs []string
	apis       []*served
	workers    []*served // every worker started, killed ones too
	dead       map[*served]bool
	sessions   []string // of the steady state: one a worker slot

	acked map[string][]ackedRun // the runs answered 202, by session, in posting order
}

// ackedRun is a message answered 202: its run and the label it carries.
type ackedRun struct{ id, label string }

// newSplit starts the proxies, two API processes and three workers.
func newSplit(t *testing.T, redisURL string) *split {
	pgURL, _ := pgtest.Schema(t)
	e := &split{top: t, v: newScriptVendor(t), dead: map[*served]bool{}, acked: map[string][]ackedRun{}}
	e.pg = faultproxy.Start(t, hostPort(t, pgURL, "5432"))
	e.rd = faultproxy.Start(t, hostPort(t, redisURL, "6379"))
	prefix := fmt.Sprintf("rein-split-%d:", time.Now().UnixNano())
	t.Cleanup(func() { dropKeys(t, redisURL, prefix) }) // after the processes end
	common := []string{"--database-url", viaProxy(t, pgURL, e.pg.Addr()), "--redis-url", viaProxy(t, redisURL, e.rd.Addr()),
		"--redis-prefix", prefix, "--lease-ttl", "2s"}
	e.in = newInstance(t, &vendor{URL: e.v.URL}, append([]string{"--mode", "api", "--allow-bypass", "--rate-limit", "1000"}, common...)...)
	e.workerArgs = append(common, "--log-level", "debug", "--max-concurrent", fmt.Sprint(splitWorkerSlots))
	start := time.Now()
	e.apis = append(e.apis, e.in.start()) // the first migrates the schema
	e.apis = append(e.apis, e.in.start())
	for range 3 {
		e.workers = append(e.workers, e.in.startWorker(e.workerArgs...))
	}
	t.Logf("2 API processes and 3 workers up in %s", time.Since(start).Round(10*time.Millisecond))
	return e
}

// bind makes the processes report to t (a subtest's, while it runs).
func (e *split) bind(t *testing.T) {
	for _, s := range e.apis {
		s.t = t
	}
	for _, s := range e.workers {
		s.t = t
	}
}

// hostPort is the host:port of a postgres:// or redis:// URL.
func hostPort(t *testing.T, raw, port string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), port)
	}
	return u.Host
}

// viaProxy is raw with its host:port replaced by addr's.
func viaProxy(t *testing.T, raw, addr string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	u.Host = addr
	return u.String()
}

// dropKeys deletes the test's Redis keys.
func dropKeys(t testing.TB, redisURL, prefix string) {
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Logf("drop the Redis keys: %v", err)
		return
	}
	c := redis.NewClient(opt)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	it := c.Scan(ctx, 0, prefix+"*", 200).Iterator()
	for it.Next(ctx) {
		c.Del(ctx, it.Val())
	}
	if err := it.Err(); err != nil {
		t.Logf("drop the Redis keys %s*: %v", prefix, err)
	}
}

// post posts the message label (a bash call held on hold.fifo, in
// permission mode bypass, when tool is set) to a session through s.
func (e *split) post(s *served, sid, label string, tool bool) string {
	msg := map[string]any{"text": label}
	if tool {
		msg["text"], msg["permission_mode"] = label+" [tool]", "bypass"
	}
	id := s.post(sid, msg)
	e.acked[sid] = append(e.acked[sid], ackedRun{id, label})
	return id
}

// holder waits until a worker logs that it took session sid with a token
// above above, and returns the worker with the highest token: the
// session's holder.
func (e *split) holder(t *testing.T, sid string, above int64) (*served, int64) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for {
		var best *served
		var tok int64
		for _, w := range e.workers {
			for _, line := range w.lines0() {
				if !strings.Contains(line, `"session taken"`) || !strings.Contains(line, sid) {
					continue
				}
				var l struct {
					Msg       string `json:"msg"`
					SessionID string `json:"session_id"`
					Token     int64  `json:"fence"`
				}
				if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "session taken" && l.SessionID == sid && l.Token > tok {
					best, tok = w, l.Token
				}
			}
		}
		if best != nil && tok > above {
			return best, tok
		}
		if time.Now().After(deadline) {
			t.Fatalf("no worker took session %s with a token above %d within %s", sid, above, guard)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lines0 returns the process's stderr lines so far (never changed after).
func (s *served) lines0() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lines
}

// kill kills a worker with SIGKILL and waits for it.
func (e *split) kill(w *served) {
	w.signal(syscall.SIGKILL)
	if state := w.wait(); state.Success() {
		w.t.Fatalf("the worker survived SIGKILL: %v", state)
	}
	e.dead[w] = true
}

// finalRuns waits until the acknowledged runs of a session are all final
// and returns the session's runs, oldest first.
func (e *split) finalRuns(t *testing.T, s *served, sid string) []api.Run {
	t.Helper()
	deadline := time.Now().Add(guard)
	for {
		var list api.RunList
		s.must(http.StatusOK, http.MethodGet, "/sessions/"+sid+"/runs", nil, &list)
		final := true
		for _, a := range e.acked[sid] {
			for _, r := range list.Items {
				if r.ID == a.id && !finalStatus(r.Status) {
					final = false
				}
			}
		}
		if final {
			return list.Items
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: runs not final after %s: %+v", sid, guard, list.Items)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func finalStatus(s string) bool {
	return s == "completed" || s == "failed" || s == "cancelled" || s == "interrupted"
}

// statuses lists the statuses of the session's acknowledged runs.
func (e *split) statuses(runs []api.Run, sid string) []string {
	ids := make([]string, len(e.acked[sid]))
	for i, a := range e.acked[sid] {
		ids[i] = a.id
	}
	return runStatuses(runs, ids...)
}

// callH is call that returns the answer's header too and fails only when
// the request gets no answer.
func callH(t *testing.T, s *served, method, path string, body any) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, raw
}

// waitReady waits until every API process's /ready answers 200.
func (e *split) waitReady(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	for _, s := range e.apis {
		for {
			code, _, raw := callH(t, s, http.MethodGet, "/ready", nil)
			if code == http.StatusOK {
				break
			}
			if time.Since(start) > guard {
				t.Fatalf("%s /ready: %d %s after %s", s.base, code, raw, guard)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return time.Since(start)
}

// unavailable checks that a request answers 503 with Retry-After — never
// 500 — and that the problem names what (when not empty).
func unavailable(t *testing.T, s *served, method, path string, body any, what string) {
	t.Helper()
	code, h, raw := callH(t, s, method, path, body)
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !strings.Contains(string(raw), what) {
		t.Errorf("%s %s %s: %d Retry-After %q: %s; want 503 with Retry-After naming %q", s.base, method, path, code, h.Get("Retry-After"), raw, what)
	}
}

// spread holds a message of each steady-state session until all are
// taken — necessarily by every worker, each holding its slots full — then
// lets them run; every worker thus reads and writes the store.
func (e *split) spread(t *testing.T, round int) {
	t.Helper()
	gates := make([]*gate, len(e.sessions))
	for i, sid := range e.sessions {
		label := fmt.Sprintf("msg-s%d-%d", i+1, round)
		gates[i] = e.v.hold(label)
		e.post(e.apis[0], sid, label, false)
	}
	for i, g := range gates {
		g.wait(t, e.sessions[i])
	}
	held := map[*served]int{}
	for _, sid := range e.sessions {
		w, _ := e.holder(t, sid, 0)
		held[w]++
	}
	for _, w := range e.workers {
		if !e.dead[w] {
			if held[w] != splitWorkerSlots {
				t.Errorf("a worker holds %d of the %d sessions, want %d each: %v", held[w], len(e.sessions), splitWorkerSlots, held)
			}
		}
	}
	for _, g := range gates {
		g.let()
	}
}

// Steady state: messages posted through API 1 run in order, one session
// per worker slot; a session's events read from API 2, then from API 1
// after the last event seen (Last-Event-ID), are its runs' events in order.
func (e *split) steady(t *testing.T) {
	api1, api2 := e.apis[0], e.apis[1]
	for range 3 * splitWorkerSlots {
		e.sessions = append(e.sessions, api1.session(e.in.project))
	}
	s1 := e.sessions[0]
	st := api2.events(s1, 0)
	e.spread(t, 1)
	for i, sid := range e.sessions {
		for n := 2; n <= 3; n++ {
			e.post(api1, sid, fmt.Sprintf("msg-s%d-%d", i+1, n), false)
		}
	}
	runs := e.acked[s1]
	first := st.until("run two's done event", doneOf(runs[1].id))
	st.stop()
	st = api1.events(s1, first[len(first)-1].ID)
	rest := st.until("run three's done event", doneOf(runs[2].id))
	st.stop()
	all := append(first, rest...)
	checkFrames(t, s1, 0, all)
	checkRunOrder(t, all, runs[0].id, runs[1].id, runs[2].id)
	for _, sid := range e.sessions {
		got := e.statuses(e.finalRuns(t, api2, sid), sid)
		if want := []string{"completed", "completed", "completed"}; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("session %s: runs %v, want %v", sid, got, want)
		}
	}
}

// checkRunOrder checks that the events belong to the runs ids, in that
// order (a run's events all before the next's), and that each run whose
// done event is there completed.
func checkRunOrder(t *testing.T, evs []sseEvent, ids ...string) {
	t.Helper()
	at := map[string]int{}
	for i, id := range ids {
		at[id] = i
	}
	last := 0
	for _, ev := range evs {
		i, ok := at[ev.Ev.RunID]
		switch {
		case !ok:
			t.Errorf("event %v of run %q, not one of %v", ev, ev.Ev.RunID, ids)
		case i < last:
			t.Errorf("event %v of run %d after events of run %d: a session's runs must not interleave", ev, i+1, last+1)
		default:
			last = i
		}
		if ev.Ev.Type == agent.EventDone && ev.Ev.Done.Reason != agent.ReasonCompleted {
			t.Errorf("run %s ended %+v, want completed", ev.Ev.RunID, ev.Ev.Done)
		}
	}
}

// kill -9 of the worker holding a session while run one waits — for the
// model, or in a bash call (inTool) — with runs two and three queued
// behind it: after the lease's TTL another worker takes the session over,
// run one is interrupted with an error text and its session healed, and
// runs two, three and four (posted after the kill, through API 2)
// complete in order; the event stream read from API 2 goes on throughout.
func (e *split) killHolder(t *testing.T, inTool bool) {
	api1, api2 := e.apis[0], e.apis[1]
	c := "c2"
	dir := e.in.project
	if inTool {
		c = "c3"
		dir = filepath.Join(e.in.root, "tools")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		fifo(t, dir)
	}
	label := func(n int) string { return fmt.Sprintf("msg-%s-%d", c, n) }
	sid := api1.session(dir)
	st := api2.events(sid, 0)
	var g *gate
	if !inTool {
		g = e.v.hold(label(1))
	}
	r1 := e.post(api1, sid, label(1), inTool)
	if inTool {
		st.until("run one's tool_start", func(ev sseEvent) bool { return ev.Ev.Type == agent.EventToolStart })
	} else {
		g.wait(t, sid)
	}
	e.post(api1, sid, label(2), false)
	e.post(api1, sid, label(3), false)
	w, tok := e.holder(t, sid, 0)
	killed := time.Now()
	e.kill(w)
	r4 := e.post(api2, sid, label(4), false)
	evs := st.until("run four's done event", doneOf(r4))
	st.stop()
	took := time.Since(killed)
	nw, _ := e.holder(t, sid, tok)
	if nw == w {
		t.Fatalf("the killed worker took the session again")
	}
	runs := e.finalRuns(t, api1, sid)
	if got := e.statuses(runs, sid); strings.Join(got, " ") != "interrupted completed completed completed" {
		t.Errorf("runs %v, want interrupted, then three completed", got)
	}
	for _, r := range runs {
		if r.ID == r1 && r.Error == "" {
			t.Errorf("the interrupted run does not say what happened: %+v", r)
		}
	}
	checkFrames(t, sid, 0, evs)
	ids := make([]string, 0, 4)
	for _, a := range e.acked[sid] {
		ids = append(ids, a.id)
	}
	checkRunOrder(t, evs, ids...)
	t.Logf("the session was taken over and its runs done %s after the kill", took.Round(10*time.Millisecond))
}

// Redis away for 3 s: messages are refused with 503 and Retry-After
// (never 500) by both API processes, /ready answers 503 naming the bus,
// what needs only PostgreSQL still answers; once Redis is back the run
// cut off ends (its lease ran out), the run queued before the cut runs,
// and new messages are taken.
func (e *split) redisAway(t *testing.T) {
	api1, api2 := e.apis[0], e.apis[1]
	a, b := api1.session(e.in.project), api1.session(e.in.project)
	g := e.v.hold("msg-c4a-1")
	e.post(api1, a, "msg-c4a-1", false)
	g.wait(t, a)
	e.post(api1, a, "msg-c4a-2", false)

	e.rd.Down()
	down := time.Now()
	refused := 0
	for i := 0; time.Since(down) < 3*time.Second; i++ {
		s := e.apis[i%2]
		unavailable(t, s, http.MethodPost, "/sessions/"+b+"/messages", map[string]any{"text": fmt.Sprintf("msg-c4b-x%d", i)}, "")
		refused++
		unavailable(t, s, http.MethodGet, "/ready", nil, "bus")
		s.must(http.StatusOK, http.MethodGet, "/sessions/"+a+"/runs", nil, nil)
		time.Sleep(200 * time.Millisecond)
	}
	e.rd.Up()
	t.Logf("Redis away %s; %d messages refused with 503; ready again after %s", time.Since(down).Round(10*time.Millisecond),
		refused, e.waitReady(t).Round(10*time.Millisecond))
	g.let()
	e.post(api2, b, "msg-c4b-1", false)

	runs := e.finalRuns(t, api2, a)
	got := e.statuses(runs, a)
	if got[1] != "completed" {
		t.Errorf("session a: runs %v: the run queued before the cut must complete", got)
	}
	// Its lease ran out while it waited: the worker stopped it and marked
	// it interrupted (or, had another holder fenced it off first, that
	// holder did).
	if got[0] != "interrupted" || runs[0].Error == "" {
		t.Errorf("the run Redis's absence cut off ended %s (%q), want interrupted with a reason", got[0], runs[0].Error)
	}
	if got := e.statuses(e.finalRuns(t, api2, b), b); strings.Join(got, " ") != "completed" {
		t.Errorf("session b: runs %v, want the one posted after the cut completed", got)
	}
	t.Logf("everything done %s after Redis came back", time.Since(down.Add(3*time.Second)).Round(10*time.Millisecond))
}

// PostgreSQL away for 3 s, with a run held in a model call that returns
// meanwhile: /ready answers 503 naming the store, messages 503; once
// PostgreSQL is back the run that could not store its end is interrupted
// or failed, the run queued behind it completes, and every worker runs
// runs again.
func (e *split) postgresAway(t *testing.T) {
	api1, api2 := e.apis[0], e.apis[1]
	c := api1.session(e.in.project)
	g := e.v.hold("msg-c5-1")
	e.post(api1, c, "msg-c5-1", false)
	g.wait(t, c)
	e.post(api1, c, "msg-c5-2", false)

	e.pg.Down()
	down := time.Now()
	for i := 0; time.Since(down) < 3*time.Second; i++ {
		s := e.apis[i%2]
		if i == 2 {
			g.let() // the run's writes fail now
		}
		unavailable(t, s, http.MethodGet, "/ready", nil, "store")
		unavailable(t, s, http.MethodPost, "/sessions/"+c+"/messages", map[string]any{"text": "msg-c5-refused"}, "")
		time.Sleep(200 * time.Millisecond)
	}
	g.let()
	e.pg.Up()
	t.Logf("PostgreSQL away %s; ready again after %s", time.Since(down).Round(10*time.Millisecond), e.waitReady(t).Round(10*time.Millisecond))
	e.post(api2, c, "msg-c5-3", false)
	runs := e.finalRuns(t, api2, c)
	got := e.statuses(runs, c)
	if (got[0] != "interrupted" && got[0] != "failed") || got[1] != "completed" || got[2] != "completed" {
		t.Errorf("runs %v, want interrupted (or failed), then two completed", got)
	}
	t.Logf("the run cut off by PostgreSQL's absence ended %s: %s", got[0], runs[0].Error)
	takes := 0
	for _, w := range e.workers {
		for _, l := range w.lines0() {
			if strings.Contains(l, `"session taken"`) && strings.Contains(l, c) {
				takes++
			}
		}
	}
	if takes > 20 {
		t.Errorf("session %s was taken %d times over PostgreSQL's absence: the workers spin on it", c, takes)
	}
	e.spread(t, 4)
	for _, sid := range e.sessions {
		e.finalRuns(t, api2, sid)
	}
	t.Logf("everything done %s after PostgreSQL came back", time.Since(down.Add(3*time.Second)).Round(10*time.Millisecond))
}

// A worker paused (SIGSTOP) while its run waits for the model loses the
// session after the lease's TTL: another worker interrupts the run and
// runs the next. Resumed (SIGCONT) with the model's answer waiting, the
// paused worker's writes are refused by the store's fence: the run stays
// interrupted, its answer never enters the session, and the worker says
// it was fenced.
func (e *split) pausedWorker(t *testing.T) {
	api1, api2 := e.apis[0], e.apis[1]
	sid := api1.session(e.in.project)
	g := e.v.hold("msg-c6-1")
	r1 := e.post(api1, sid, "msg-c6-1", false)
	g.wait(t, sid)
	e.post(api1, sid, "msg-c6-2", false)
	w, tok := e.holder(t, sid, 0)
	w.signal(syscall.SIGSTOP)
	paused := true
	defer func() {
		if paused {
			_ = w.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	if nw, _ := e.holder(t, sid, tok); nw == w {
		t.Fatal("the paused worker took the session again")
	}
	before := e.finalRuns(t, api2, sid)
	if got := e.statuses(before, sid); strings.Join(got, " ") != "interrupted completed" {
		t.Fatalf("runs %v while the worker is paused, want interrupted, completed", got)
	}
	g.let() // the model's answer waits in the paused worker's socket
	time.Sleep(200 * time.Millisecond)
	w.signal(syscall.SIGCONT)
	paused = false
	line := w.waitLog("session's fence")
	t.Logf("the resumed worker: %.300s", line)
	e.post(api2, sid, "msg-c6-3", false)
	after := e.finalRuns(t, api2, sid)
	if got := e.statuses(after, sid); strings.Join(got, " ") != "interrupted completed completed" {
		t.Errorf("runs %v after the worker resumed, want interrupted, completed, completed", got)
	}
	for _, r := range after {
		if r.ID == r1 && (r.Status != before[0].Status || r.Error != before[0].Error || !r.EndedAt.Equal(before[0].EndedAt)) {
			t.Errorf("the fenced worker changed its run: %+v, was %+v", r, before[0])
		}
	}
	export := api1.must(http.StatusOK, http.MethodGet, "/sessions/"+sid+"/export?format=jsonl", nil, nil)
	if bytes.Contains(export, []byte("Answer: msg-c6-1")) {
		t.Errorf("the fenced worker's answer entered the session:\n%s", export)
	}
}

// check is the checker every case ends with, over the store through the
// HTTP API, for every session of the test so far: every message answered
// 202 is a run present once, final; a message refused never ran; no two
// runs of a session ran at once, and they ran in posting order; each
// completed run's prompt and answer are in the session's log once, in
// their run; the runs' entries never interleave; every tool call has its
// result; and every model request the vendor got held a paired
// conversation, and no prompt went to the model twice.
func (e *split) check(t *testing.T) {
	t.Helper()
	for sid := range e.acked {
		e.checkSession(t, sid)
	}
	seen := map[string]int{}
	for _, r := range e.v.requests() {
		if r.fresh && r.label != "" {
			seen[r.label]++
			if seen[r.label] == 2 {
				t.Errorf("the prompt %s went to the model twice: a run ran twice", r.label)
			}
		}
		if r.msgs != nil {
			if err := answered(r.msgs); err != nil {
				t.Errorf("the model request of %s: %v", r.label, err)
			}
		}
	}
}

func (e *split) checkSession(t *testing.T, sid string) {
	t.Helper()
	s := e.apis[0]
	runs := e.finalRuns(t, s, sid)
	label := map[string]string{}
	for _, a := range e.acked[sid] {
		label[a.id] = a.label
		n := 0
		for _, r := range runs {
			if r.ID == a.id {
				n++
			}
		}
		if n != 1 {
			t.Errorf("session %s: the acknowledged run %s (%s) is listed %d times", sid, a.id, a.label, n)
		}
	}
	pos := map[string]int{}
	var prev *api.Run
	for i, r := range runs {
		pos[r.ID] = i
		if label[r.ID] == "" {
			if r.Status != "failed" || !r.StartedAt.IsZero() {
				t.Errorf("session %s: run %s was refused (503) yet it is %s, started %v", sid, r.ID, r.Status, r.StartedAt)
			}
			continue
		}
		if r.StartedAt.IsZero() {
			continue
		}
		if prev != nil && r.StartedAt.Before(prev.EndedAt) {
			t.Errorf("session %s: run %s (%s) started at %s, before run %s (%s) ended at %s: two runs ran at once, or out of order",
				sid, r.ID, label[r.ID], r.StartedAt.Format(time.StampMicro), prev.ID, label[prev.ID], prev.EndedAt.Format(time.StampMicro))
		}
		prev = &runs[i]
	}

	raw := s.must(http.StatusOK, http.MethodGet, "/sessions/"+sid+"/export?format=jsonl", nil, nil)
	var entries []session.Entry
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var en session.Entry
		if err := json.Unmarshal(sc.Bytes(), &en); err != nil {
			t.Fatalf("session %s: export line %q: %v", sid, sc.Text(), err)
		}
		entries = append(entries, en)
	}
	var conv []llm.Message
	var order []string
	done := map[string]bool{}
	prompts, answers := map[string]int{}, map[string]int{}
	for _, en := range entries {
		switch {
		case en.Kind == session.KindMessage:
			conv = append(conv, *en.Message)
		case en.Kind == session.KindCompaction:
			conv = append([]llm.Message(nil), en.Compaction.History...)
		case en.Kind == session.KindHeal && en.Heal.History != nil:
			conv = append([]llm.Message(nil), en.Heal.History...)
		}
		if en.RunID == "" {
			continue
		}
		if n := len(order); n == 0 || order[n-1] != en.RunID {
			if done[en.RunID] {
				t.Errorf("session %s: entry %d of run %s (%s) after entries of run %s (%s): runs' entries interleave",
					sid, en.Seq, en.RunID, label[en.RunID], order[n-1], label[order[n-1]])
			}
			if n > 0 && pos[en.RunID] < pos[order[n-1]] {
				t.Errorf("session %s: run %s (%s) wrote after the later run %s (%s)", sid, en.RunID, label[en.RunID], order[n-1], label[order[n-1]])
			}
			done[en.RunID] = true
			order = append(order, en.RunID)
		}
		if en.Kind != session.KindMessage {
			continue
		}
		text := en.Message.TextOf()
		for _, w := range strings.Fields(text) {
			if en.Message.Role == llm.RoleUser && w == label[en.RunID] {
				prompts[en.RunID]++
			}
		}
		if en.Message.Role == llm.RoleAssistant && strings.Contains(text, "Answer: "+label[en.RunID]) {
			answers[en.RunID]++
		}
	}
	for _, r := range runs {
		if label[r.ID] == "" {
			continue
		}
		if prompts[r.ID] > 1 || r.Status == "completed" && prompts[r.ID] != 1 {
			t.Errorf("session %s: run %s (%s, %s) has its prompt %d times in the log", sid, r.ID, label[r.ID], r.Status, prompts[r.ID])
		}
		if r.Status == "completed" && answers[r.ID] != 1 || r.Status != "completed" && answers[r.ID] != 0 {
			t.Errorf("session %s: run %s (%s, %s) has its answer %d times in the log", sid, r.ID, label[r.ID], r.Status, answers[r.ID])
		}
	}
	if err := answered(conv); err != nil {
		t.Errorf("session %s: the stored conversation: %v", sid, err)
	}
}

// scriptVendor is a mock vendor whose reply depends on the request, not
// on the order requests come in (workers run sessions concurrently): a
// prompt carries a label (msg-…); a prompt with [tool] gets a bash call
// held on hold.fifo, any other prompt or a tool's result gets "Answer:"
// and the label. A prompt's request can be held until the test lets it
// go or the client goes away.
type scriptVendor struct {
	URL string

	mu    sync.Mutex
	gates map[string]*gate // by label
	log   []vendorRequest
}

// vendorRequest is a model request the vendor got.
type vendorRequest struct {
	label string
	fresh bool          // its last message is a prompt, not tool results
	msgs  []llm.Message // nil when it did not get an answer
}

// gate holds the request of one prompt.
type gate struct {
	arrived, release chan struct{}
	arrive, let1     sync.Once
}

// let lets the held request through.
func (g *gate) let() { g.let1.Do(func() { close(g.release) }) }

// wait waits for the held request.
func (g *gate) wait(t *testing.T, sid string) {
	t.Helper()
	select {
	case <-g.arrived:
	case <-time.After(guard):
		t.Fatalf("session %s: the held model request did not arrive within %s", sid, guard)
	}
}

var labelRE = regexp.MustCompile(`^msg-[a-z0-9]+-[a-z0-9]+$`)

func newScriptVendor(t *testing.T) *scriptVendor {
	v := &scriptVendor{gates: map[string]*gate{}}
	ts := httptest.NewServer(http.HandlerFunc(v.serveHTTP))
	t.Cleanup(func() {
		v.mu.Lock()
		for _, g := range v.gates {
			g.let()
		}
		v.mu.Unlock()
		ts.CloseClientConnections()
		ts.Close()
	})
	v.URL = ts.URL
	return v
}

// hold holds the model request of the prompt label.
func (v *scriptVendor) hold(label string) *gate {
	v.mu.Lock()
	defer v.mu.Unlock()
	g := &gate{arrived: make(chan struct{}), release: make(chan struct{})}
	v.gates[label] = g
	return g
}

// requests returns the requests so far.
func (v *scriptVendor) requests() []vendorRequest {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]vendorRequest(nil), v.log...)
}

// vendorPost starts a scripted vendor's answer to one request: a mock
// server that takes the test's key, and the request's body, read. A
// request other than a POST (the model list) is answered here, and ok is
// false; so is one whose body cannot be read.
func vendorPost(w http.ResponseWriter, r *http.Request) (m *mockserver.Server, body []byte, ok bool) {
	m = mockserver.NewUnstarted()
	m.APIKey = fakeKey
	if r.Method != http.MethodPost {
		m.Handler().ServeHTTP(w, r)
		return nil, nil, false
	}
	body, err := io.ReadAll(r.Body)
	return m, body, err == nil
}

// vendorAnswer has m answer the request whose body vendorPost read with
// turn.
func vendorAnswer(m *mockserver.Server, w http.ResponseWriter, r *http.Request, body []byte, turn mockserver.Turn) {
	m.Enqueue(turn)
	r.Body = io.NopCloser(bytes.NewReader(body))
	m.Handler().ServeHTTP(w, r)
}

func (v *scriptVendor) serveHTTP(w http.ResponseWriter, r *http.Request) {
	m, body, ok := vendorPost(w, r)
	if !ok {
		return
	}
	label, fresh, tool := readPrompt(body)
	var turn mockserver.Turn
	switch {
	case fresh && tool:
		turn.ToolCalls = []mockserver.ToolCall{{ID: "call_" + strings.ReplaceAll(label, "-", "_"), Name: "bash", Input: holdCommand}}
	case fresh:
		turn.Text = "Answer: " + label + "."
	default:
		turn.Text = "Answer: " + label + ", after the tool."
	}
	v.mu.Lock()
	k := len(v.log)
	v.log = append(v.log, vendorRequest{label: label, fresh: fresh})
	g := v.gates[label]
	v.mu.Unlock()
	if g != nil && fresh {
		g.arrive.Do(func() { close(g.arrived) })
		select {
		case <-g.release:
		case <-r.Context().Done():
			return // the worker went away, or its run was cancelled
		}
	}
	vendorAnswer(m, w, r, body, turn)
	if reqs := m.Requests(); len(reqs) == 1 && reqs[0].Decoded != nil {
		v.mu.Lock()
		v.log[k].msgs = reqs[0].Decoded.Messages
		v.mu.Unlock()
	}
}

// readPrompt reads a Messages API request: the label of its last prompt,
// whether its last message is that prompt (not tool results), and
// whether the prompt asks for a tool call.
func readPrompt(body []byte) (label string, fresh, tool bool) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return "", false, false
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" {
			continue
		}
		var text string
		results := false
		if json.Unmarshal(m.Content, &text) != nil {
			var blocks []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			_ = json.Unmarshal(m.Content, &blocks)
			for _, b := range blocks {
				text += b.Text + " "
				results = results || b.Type == "tool_result"
			}
		}
		for _, w := range strings.Fields(text) {
			if labelRE.MatchString(w) {
				return w, i == len(req.Messages)-1 && !results, strings.Contains(text, "[tool]")
			}
		}
	}
	return "", false, false
}
