package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// The production split (issue 13): -database-url and -redis-url given, the
// runs part starts, for each -workers count N, 2 × `rein serve --mode api`
// and N × `rein worker` on a fresh PostgreSQL schema and Redis prefix.
// Sessions are created and messages posted on API 1; their event streams
// are read from API 2, so every event goes worker → Redis → API 2.

// splitResult is what one worker count measured.
type splitResult struct {
	workers    int
	runs       int
	window     time.Duration
	p50, p99   time.Duration // POST → done read
	queue      []time.Duration
	takes      []time.Duration // the workers' "session taken" lines
	events     []time.Duration // event birth → read from API 2
	dones      []time.Duration // the same, done events only
	api, work  time.Duration   // CPU of the API processes, of the workers
	pg, redis  time.Duration   // CPU of this step's PostgreSQL backends, of redis-server
	bench      time.Duration   // this program's
	machine    time.Duration   // every CPU's busy time (/proc/stat)
	pgBackends int
	warnings   [2]int // lines logged at WARN or ERROR by the API processes, by the workers
	lastWarn   string // the last of them
}

// pct returns the p-th percentile of sorted durations.
func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, len(d)*p/100)]
}

// measureSplit measures the split with n workers.
func measureSplit(ctx context.Context, o options, bin, dir, vendorURL string, n int) (*splitResult, error) {
	schema := fmt.Sprintf("bench_%d", n)
	app := fmt.Sprintf("rein-bench-%d-%d", os.Getpid(), n)
	if err := pgExec(ctx, o.databaseURL, "DROP SCHEMA IF EXISTS "+schema+" CASCADE; CREATE SCHEMA "+schema); err != nil {
		return nil, fmt.Errorf("create schema %s: %w", schema, err)
	}
	defer func() {
		if err := pgExec(context.WithoutCancel(ctx), o.databaseURL, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			fmt.Fprintf(os.Stderr, "bench/server: drop schema %s: %v\n", schema, err)
		}
	}()
	dbURL, err := withParams(o.databaseURL, "search_path", schema, "application_name", app)
	if err != nil {
		return nil, err
	}
	prefix := app + ":"
	defer cleanRedis(context.WithoutCancel(ctx), o.redisURL, prefix)
	common := []string{"--database-url", dbURL, "--redis-url", o.redisURL, "--redis-prefix", prefix, "--shutdown-timeout", "2s"}

	root := filepath.Join(dir, "root")
	project, err := makeProject(root)
	if err != nil {
		return nil, err
	}
	var procs []*server
	defer func() {
		var wg sync.WaitGroup
		for _, p := range procs {
			wg.Go(p.stop)
		}
		wg.Wait()
	}()
	var apis [2]*server
	for i := range apis {
		d := filepath.Join(dir, fmt.Sprintf("api%d", i+1))
		s, err := launch(bin, d, project, vendorURL, servePrefix, nil, append([]string{"serve", "--mode", "api",
			"--addr", "127.0.0.1:0", "--root", root, "--data-dir", filepath.Join(d, "data"), "--rate-limit=-1"}, common...)...)
		if err != nil {
			return nil, fmt.Errorf("API %d: %w", i+1, err)
		}
		apis[i] = s
		procs = append(procs, s)
	}
	start := time.Now()
	res := &splitResult{workers: n, window: o.duration}
	rec := &recorder{from: start.Add(o.warmup), to: start.Add(o.warmup + o.duration)}
	var mu sync.Mutex
	workers := make([]*server, n)
	for i := range workers {
		d := filepath.Join(dir, fmt.Sprintf("worker%d", i+1))
		onLine := func(line string) {
			if d, at, ok := sessionTaken(line); ok && !at.Before(rec.from) && !at.After(rec.to) {
				mu.Lock()
				res.takes = append(res.takes, d)
				mu.Unlock()
			}
		}
		s, err := launch(bin, d, project, vendorURL, workerPrefix, onLine, append([]string{"worker",
			"--data-dir", filepath.Join(d, "data"), "--max-concurrent", strconv.Itoa(o.maxConcurrent), "--log-level", "debug"}, common...)...)
		if err != nil {
			return nil, fmt.Errorf("worker %d: %w", i+1, err)
		}
		workers[i] = s
		procs = append(procs, s)
	}
	ws, err := apis[0].workspace(ctx)
	if err != nil {
		return nil, err
	}

	// CPU at both ends of the window.
	var samples [2]cpuSample
	var sampleErr [2]error
	var sampled sync.WaitGroup
	for i, at := range []time.Time{rec.from, rec.to} {
		sampled.Add(1)
		time.AfterFunc(time.Until(at), func() {
			defer sampled.Done()
			samples[i], sampleErr[i] = sampleCPU(ctx, o.databaseURL, app, apis[:], workers)
		})
	}
	seen := func(data []byte, read time.Time) {
		if read.Before(rec.from) || read.After(rec.to) {
			return
		}
		born, done, ok := eventTime(data)
		if !ok {
			return
		}
		mu.Lock()
		res.events = append(res.events, read.Sub(born))
		if done {
			res.dones = append(res.dones, read.Sub(born))
		}
		mu.Unlock()
	}
	c := clients{post: apis[0], sse: apis[1], seen: seen, stuck: 30 * time.Second}
	wctx, cancel := context.WithDeadline(ctx, rec.to)
	defer cancel()
	errc := make(chan error, o.sessions)
	for range o.sessions {
		go func() { errc <- worker(wctx, c, ws, o.perSession, rec) }()
	}
	var failed error
	for range o.sessions {
		if err := <-errc; err != nil && wctx.Err() == nil && failed == nil {
			failed = err
			cancel()
		}
	}
	if failed != nil {
		var logs strings.Builder
		for i, p := range procs {
			fmt.Fprintf(&logs, "\n--- process %d (%s):\n%s", i+1, p.cmd.Args[1], p.log())
		}
		return nil, fmt.Errorf("%w%s", failed, logs.String())
	}
	sampled.Wait()
	if err := errors.Join(sampleErr[:]...); err != nil {
		return nil, err
	}
	res.runs = len(rec.latencies)
	if res.runs == 0 {
		return nil, fmt.Errorf("no run ended within %s after the warm-up", o.duration)
	}
	slices.Sort(rec.latencies)
	res.p50, res.p99 = pct(rec.latencies, 50), pct(rec.latencies, 99)
	a, b := samples[0], samples[1]
	res.api, res.work, res.redis, res.bench = b.api-a.api, b.work-a.work, b.redis-a.redis, b.bench-a.bench
	res.machine = b.machine - a.machine
	for pid, t := range b.pg {
		res.pg += t - a.pg[pid] // a backend born in the window counts whole
	}
	res.pgBackends = len(b.pg)
	if res.queue, err = queueLatencies(ctx, dbURL, rec.from, rec.to); err != nil {
		return nil, err
	}
	time.Sleep(100 * time.Millisecond) // the workers' last log lines
	for _, p := range procs {
		k := 0
		if p.cmd.Args[1] == "worker" {
			k = 1
		}
		if w := p.warnings(); w > 0 {
			res.warnings[k] += w
			res.lastWarn = p.lastWarning()
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, d := range [][]time.Duration{res.queue, res.takes, res.events, res.dones} {
		slices.Sort(d)
	}
	return res, nil
}

// sessionTaken reads a worker's debug line "session taken": its
// queue_latency_ms and the line's time.
func sessionTaken(line string) (time.Duration, time.Time, bool) {
	if !strings.Contains(line, `"session taken"`) {
		return 0, time.Time{}, false
	}
	var l struct {
		Time    time.Time `json:"time"`
		Latency *float64  `json:"queue_latency_ms"`
	}
	if json.Unmarshal([]byte(line), &l) != nil || l.Latency == nil {
		return 0, time.Time{}, false
	}
	return time.Duration(*l.Latency * float64(time.Millisecond)), l.Time, true
}

// eventTime reads an event's "time" (its birth, agent.Event.Time) and
// whether it is a done event, without decoding the rest.
func eventTime(data []byte) (born time.Time, done, ok bool) {
	const key = `"time":"`
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return time.Time{}, false, false
	}
	rest := data[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return time.Time{}, false, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(rest[:j]))
	if err != nil {
		return time.Time{}, false, false
	}
	return t, bytes.HasPrefix(data, []byte(`{"type":"done"`)), true
}

// queueLatencies reads, from the runs the window saw start, the time from
// the run's creation (the API stored it, just before enqueueing its
// session) to its start on a worker.
func queueLatencies(ctx context.Context, dbURL string, from, to time.Time) ([]time.Duration, error) {
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	rows, err := c.Query(ctx, `SELECT run->>'created_at', run->>'started_at' FROM runs WHERE run->>'started_at' IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	defer rows.Close()
	var out []time.Duration
	for rows.Next() {
		var created, started string
		if err := rows.Scan(&created, &started); err != nil {
			return nil, err
		}
		c, err1 := time.Parse(time.RFC3339Nano, created)
		s, err2 := time.Parse(time.RFC3339Nano, started)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("runs: %w", err)
		}
		if !s.Before(from) && !s.After(to) {
			out = append(out, s.Sub(c))
		}
	}
	return out, rows.Err()
}

// cpuSample is the CPU time used so far by each kind of process.
type cpuSample struct {
	api, work, redis, bench time.Duration
	machine                 time.Duration
	pg                      map[int]time.Duration // by backend pid
}

// machineBusy reads the time all CPUs spent neither idle nor waiting for
// I/O, from /proc/stat.
func machineBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: %q", line)
	}
	var busy int64
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %w", err)
		}
		// user nice system idle iowait irq softirq steal (guest counted in user)
		if i != 3 && i != 4 && i < 8 {
			busy += n
		}
	}
	return time.Duration(busy) * time.Second / userHZ, nil
}

// sampleCPU reads the CPU times of the processes: the PostgreSQL backends
// are those whose application_name is app (this step's processes).
func sampleCPU(ctx context.Context, baseURL, app string, apis, workers []*server) (cpuSample, error) {
	var s cpuSample
	s.bench = selfCPU()
	var err error
	if s.machine, err = machineBusy(); err != nil {
		return s, err
	}
	for _, set := range []struct {
		procs []*server
		sum   *time.Duration
	}{{apis, &s.api}, {workers, &s.work}} {
		for _, p := range set.procs {
			t, commands, err := p.cpu()
			if err != nil {
				return s, err
			}
			*set.sum += t + commands // with -tool bash, a worker's commands are its children
		}
	}
	if pid := findProcess("redis-server"); pid > 0 {
		s.redis, _ = pidCPU(pid)
	}
	c, err := pgx.Connect(ctx, baseURL)
	if err != nil {
		return s, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	rows, err := c.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, app)
	if err != nil {
		return s, err
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return s, err
	}
	s.pg = map[int]time.Duration{}
	for _, pid := range pids {
		if t, err := pidCPU(int(pid)); err == nil {
			s.pg[int(pid)] = t
		}
	}
	return s, nil
}

// findProcess returns the pid of a process named comm, or 0.
func findProcess(comm string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm")); err == nil && strings.TrimSpace(string(b)) == comm {
			return pid
		}
	}
	return 0
}

// withParams adds settings to a PostgreSQL connection string, a URL or
// key=value settings (as session/postgres/pgtest does).
func withParams(conn string, kv ...string) (string, error) {
	if strings.HasPrefix(conn, "postgres://") || strings.HasPrefix(conn, "postgresql://") {
		u, err := url.Parse(conn)
		if err != nil {
			return "", errors.New("-database-url does not parse as a URL")
		}
		q := u.Query()
		for i := 0; i+1 < len(kv); i += 2 {
			q.Set(kv[i], kv[i+1])
		}
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	for i := 0; i+1 < len(kv); i += 2 {
		conn += " " + kv[i] + "=" + kv[i+1]
	}
	return conn, nil
}

// pgExec runs sql on the database.
func pgExec(ctx context.Context, dbURL, sql string) error {
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	_, err = c.Exec(ctx, sql)
	return err
}

// cleanRedis deletes the keys under prefix.
func cleanRedis(ctx context.Context, redisURL, prefix string) {
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	it := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for it.Next(ctx) {
		keys = append(keys, it.Val())
	}
	for len(keys) > 0 {
		k := keys[:min(len(keys), 500)]
		keys = keys[len(k):]
		if err := rdb.Del(ctx, k...).Err(); err != nil {
			fmt.Fprintf(os.Stderr, "bench/server: delete Redis keys under %s: %v\n", prefix, err)
			return
		}
	}
}

func (r *splitResult) report(t *table, o options) {
	t.heading(fmt.Sprintf("split: 2 × rein serve --mode api, %d × rein worker (--max-concurrent %d); %d sessions at once, "+
		"posts on API 1, SSE from API 2; %s counted after %s", r.workers, o.maxConcurrent, o.sessions, o.duration, o.warmup))
	t.row("runs completed", fmt.Sprintf("%d", r.runs))
	t.row("runs per minute", fmt.Sprintf("%.0f", float64(r.runs)/r.window.Minutes()))
	t.row("latency p50 / p99 (POST → done read)", fmt.Sprintf("%s / %s", ms(r.p50), ms(r.p99)))
	t.row(fmt.Sprintf("queue latency p50 / p99 (run stored → started on a worker; %d runs)", len(r.queue)),
		fmt.Sprintf("%s / %s", ms(pct(r.queue, 50)), ms(pct(r.queue, 99))))
	t.row(fmt.Sprintf("lease latency p50 / p99 (workers' \"session taken\", whole ms; %d)", len(r.takes)),
		fmt.Sprintf("%s / %s", ms(pct(r.takes, 50)), ms(pct(r.takes, 99))))
	t.row(fmt.Sprintf("event latency p50 / p99 (birth → SSE read on API 2; %d events)", len(r.events)),
		fmt.Sprintf("%s / %s", ms(pct(r.events, 50)), ms(pct(r.events, 99))))
	t.row("done event latency p50 / p99", fmt.Sprintf("%s / %s", ms(pct(r.dones, 50)), ms(pct(r.dones, 99))))
	per := func(d time.Duration) string {
		return fmt.Sprintf("%s a run, %.2f cores", ms(d/time.Duration(r.runs)), d.Seconds()/r.window.Seconds())
	}
	t.row("lines logged at WARN or ERROR: API processes / workers", fmt.Sprintf("%d / %d", r.warnings[0], r.warnings[1]))
	if r.lastWarn != "" {
		t.row("  the last", r.lastWarn)
	}
	t.row("CPU: API processes (both)", per(r.api))
	t.row(fmt.Sprintf("CPU: workers (all %d)", r.workers), per(r.work))
	t.row(fmt.Sprintf("CPU: PostgreSQL backends of this step (%d)", r.pgBackends), per(r.pg))
	t.row("CPU: redis-server (whole, shared)", per(r.redis))
	t.row("CPU: this program (mock vendor, clients)", per(r.bench))
	other := r.machine - r.api - r.work - r.pg - r.redis - r.bench
	t.row("CPU: the whole machine / the rest (other PostgreSQL, kernel, other work)",
		fmt.Sprintf("%.2f / %.2f cores of %d", r.machine.Seconds()/r.window.Seconds(), other.Seconds()/r.window.Seconds(), runtime.NumCPU()))
}
