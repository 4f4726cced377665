package mirror_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/mirror"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/sqlite"
)

// source is a store that is its own ledger, as the server's are.
type source interface {
	session.Store
	session.Ledger
}

// memSource is the in-memory store with its ledger.
type memSource struct {
	*session.MemStore
	*session.MemLedger
}

func newMemSource() memSource {
	return memSource{session.NewMemStore(), session.NewMemLedger()}
}

// openMirror opens mirrors with session/sqlite, as rein serve does.
func openMirror(busy time.Duration) func(string) (mirror.DB, error) {
	return func(path string) (mirror.DB, error) {
		db, err := sqlite.Open(path, sqlite.Options{Sync: sqlite.SyncNormal, BusyTimeout: busy})
		if err != nil {
			return nil, err
		}
		return db, nil
	}
}

// logBuffer collects a logger's lines, safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// mirrorEnv is a Service whose runs feed a history mirror, over src, with
// a project workspace that has a .rein directory.
type mirrorEnv struct {
	svc    *runner.Service
	src    source
	mirror *mirror.Mirror
	ws     *session.Workspace
	dir    string
	logs   *logBuffer
}

// chatty answers each prompt with a list_dir call and then a text, so a
// run leaves messages, tool records and a run record.
func chatty() llm.Provider {
	return &llmtest.Scripted{NoRecord: true, Repeat: &llmtest.Reply{Func: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		last := req.Messages[len(req.Messages)-1]
		reply := llmtest.Reply{Text: "looking", ToolCalls: []llm.ToolUse{llmtest.Call("c1", "list_dir", `{"path":"."}`)},
			Usage: llm.Usage{InputTokens: 10, OutputTokens: 2}}
		if len(last.ToolResults()) > 0 {
			reply = llmtest.Reply{Text: "done: " + llmtest.LastUserText(req), Usage: llm.Usage{InputTokens: 20, OutputTokens: 3}}
		}
		return llmtest.NewScripted(reply).Stream(ctx, req)
	}}}
}

func newMirrorEnv(t testing.TB, src source, mcfg mirror.Config) *mirrorEnv {
	t.Helper()
	home, dir := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".rein"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "PATH": os.Getenv("PATH"), "REIN_SANDBOX": "off"}
	e := &mirrorEnv{src: src, dir: dir, logs: &logBuffer{}}
	logger := slog.New(slog.NewTextHandler(e.logs, nil))
	mcfg.Store, mcfg.Ledger, mcfg.Logger = src, src, logger
	if mcfg.Open == nil {
		mcfg.Open = openMirror(time.Second)
	}
	if mcfg.Backoff == nil {
		mcfg.Backoff = func(int) time.Duration { return 5 * time.Millisecond }
	}
	if mcfg.Gather == 0 {
		mcfg.Gather = 20 * time.Millisecond // TestMirrorCopiesTogether_API6 tests the default
	}
	m, err := mirror.New(mcfg)
	if err != nil {
		t.Fatal(err)
	}
	e.mirror = m
	bus := eventbus.NewMemory(eventbus.Options{})
	p := chatty()
	svc, err := runner.NewService(runner.ServiceConfig{Sessions: src, Ledger: src, Bus: bus, DataDir: t.TempDir(),
		MaxConcurrent: 4, Getenv: func(k string) string { return env[k] }, Mirror: m, Logger: logger,
		Resolve: func(_ *registry.Registry, spec string) (*runner.Model, error) {
			return &runner.Model{Provider: p, ProviderName: "scripted", Name: "m", Label: "scripted/m",
				Caps: registry.Model{Name: "m", ContextWindow: 200_000, MaxOutput: 8_000}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		svc.Shutdown(ctx) // closes the mirror
		bus.Close()
	})
	e.ws = e.workspace(t, session.WorkspaceProject, dir)
	return e
}

func (e *mirrorEnv) workspace(t testing.TB, kind session.WorkspaceKind, dir string) *session.Workspace {
	t.Helper()
	ws := &session.Workspace{Caller: "alice", Kind: kind, Dir: dir}
	if err := e.src.CreateWorkspace(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	return ws
}

func (e *mirrorEnv) session(t testing.TB, ws *session.Workspace) string {
	t.Helper()
	s := &session.Session{Caller: "alice", Workspace: ws.ID, WorkDir: ws.Dir}
	if err := e.src.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// run submits a message and waits for its run to complete.
func (e *mirrorEnv) run(t testing.TB, sessionID, text string) {
	t.Helper()
	if err := e.tryRun(sessionID, text); err != nil {
		t.Fatal(err)
	}
}

// tryRun is run for goroutines other than the test's.
func (e *mirrorEnv) tryRun(sessionID, text string) error {
	r, err := e.svc.Submit(context.Background(), session.Submission{SessionID: sessionID, Caller: "alice", Text: text})
	if err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, err := e.src.GetRun(context.Background(), r.ID)
		switch {
		case err != nil:
			return err
		case r.Status == session.RunCompleted:
			return nil
		case r.Status.Final():
			return fmt.Errorf("run %s: %s (%s)", r.ID, r.Status, r.Error)
		case time.Now().After(deadline):
			return fmt.Errorf("run %s still %s after a minute", r.ID, r.Status)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (e *mirrorEnv) path() string { return filepath.Join(e.dir, mirror.File) }

// waitMirror polls until the mirror has nothing left to copy.
func waitMirror(t testing.TB, m *mirror.Mirror) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for m.Stats().Dirty > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the mirror is still behind after a minute: %+v", m.Stats())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// readMirror opens a mirror file for reading, as another tool would.
func readMirror(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	db, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// compareMirror checks that the mirror holds the session exactly as the
// store does: metadata and entries, seqs included.
func compareMirror(t testing.TB, store, mirror session.Store, id string) {
	t.Helper()
	ctx := context.Background()
	want, err := store.Get(ctx, id)
	if err != nil {
		t.Fatalf("store: %v", err)
	}
	got, err := mirror.Get(ctx, id)
	if err != nil {
		t.Fatalf("mirror: %v", err)
	}
	if d := cmp.Diff(jsonOf(t, want), jsonOf(t, got)); d != "" {
		t.Errorf("session %s: metadata differs (-store +mirror):\n%s", id, d)
	}
	if d := cmp.Diff(entriesOf(t, store, id), entriesOf(t, mirror, id)); d != "" {
		t.Errorf("session %s: entries differ (-store +mirror):\n%s", id, d)
	}
}

func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// entriesOf is the session's log as JSON lines.
func entriesOf(t testing.TB, s session.Store, id string) []string {
	t.Helper()
	var out []string
	for e, err := range s.Entries(context.Background(), id, 0) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, jsonOf(t, e))
	}
	return out
}

// mirrorIDs lists the sessions a mirror holds.
func mirrorIDs(t testing.TB, s session.Store) []string {
	t.Helper()
	list, _, err := s.List(context.Background(), session.ListOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range list {
		ids = append(ids, x.ID)
	}
	return sortedCopy(ids)
}

func sortedCopy(ids []string) []string {
	out := append([]string(nil), ids...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// API-6: many sessions × runs through the Service, concurrently; once the
// mirror has caught up, it holds every session exactly as the store does.
func TestMirrorSoak_API6(t *testing.T) {
	for _, tc := range []struct {
		name           string
		sessions, runs int
		src            func(t *testing.T) source
	}{
		{"memory", 12, 4, func(*testing.T) source { return newMemSource() }},
		{"sqlite", 6, 3, func(t *testing.T) source {
			db, err := sqlite.Open(filepath.Join(t.TempDir(), "rein.db"), sqlite.Options{Sync: sqlite.SyncNormal})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sessions, runs := tc.sessions, tc.runs
			e := newMirrorEnv(t, tc.src(t), mirror.Config{Batch: 5})
			ids := make([]string, sessions)
			for i := range ids {
				ids[i] = e.session(t, e.ws)
			}
			var wg sync.WaitGroup
			for i, id := range ids {
				wg.Go(func() {
					for j := range runs {
						if err := e.tryRun(id, fmt.Sprintf("s%d r%d", i, j)); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			waitMirror(t, e.mirror)
			mirror := readMirror(t, e.path())
			if d := cmp.Diff(sortedCopy(ids), mirrorIDs(t, mirror)); d != "" {
				t.Errorf("sessions in the mirror (-want +got):\n%s", d)
			}
			for _, id := range ids {
				compareMirror(t, e.src, mirror, id)
			}
			if st := e.mirror.Stats(); st.Retries != 0 || st.Resets != 0 || st.Entries == 0 {
				t.Errorf("stats %+v: want entries copied, no retry, no reset", st)
			}
			if e.mirror.Lag() != 0 {
				t.Errorf("lag %v with nothing dirty", e.mirror.Lag())
			}
		})
	}
}

// A mirror locked by another process (BEGIN EXCLUSIVE held) fails no run;
// the mirror retries and catches up once the lock is released.
func TestMirrorLockedNeverBlocksRuns(t *testing.T) {
	e := newMirrorEnv(t, newMemSource(), mirror.Config{Open: openMirror(20 * time.Millisecond)})
	a := e.session(t, e.ws)
	e.run(t, a, "first")
	waitMirror(t, e.mirror)

	ctx := context.Background()
	other, err := sql.Open("sqlite", "file:"+e.path()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	b := e.session(t, e.ws)
	for i := range 3 {
		e.run(t, a, fmt.Sprintf("a%d", i))
		e.run(t, b, fmt.Sprintf("b%d", i))
	}
	deadline := time.Now().Add(time.Minute)
	for e.mirror.Stats().Retries < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no retry while the mirror is locked: %+v", e.mirror.Stats())
		}
		time.Sleep(2 * time.Millisecond)
	}
	st := e.mirror.Stats()
	if st.Dirty == 0 || !strings.Contains(st.LastError, "locked") && !strings.Contains(st.LastError, "busy") {
		t.Errorf("stats while locked: %+v; want dirty sessions and a lock error", st)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	e.mirror.Notify(a) // nothing new for a: the retry is due anyway
	waitMirror(t, e.mirror)
	mirror := readMirror(t, e.path())
	compareMirror(t, e.src, mirror, a)
	compareMirror(t, e.src, mirror, b)
	if n := strings.Count(e.logs.String(), "copy failed"); n != 1 {
		t.Errorf("%d failure warnings; want one for the streak\n%s", n, e.logs)
	}
	if !strings.Contains(e.logs.String(), "copying again") {
		t.Errorf("no recovery logged:\n%s", e.logs)
	}
}

// A mirror file deleted under the syncer is created again, with every
// session of the workspace, not only the one that ran.
func TestMirrorDeletedFileRecreated(t *testing.T) {
	e := newMirrorEnv(t, newMemSource(), mirror.Config{})
	a, b := e.session(t, e.ws), e.session(t, e.ws)
	e.run(t, a, "one")
	e.run(t, b, "two")
	waitMirror(t, e.mirror)
	for _, s := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(e.path() + s); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	e.run(t, a, "three")
	waitMirror(t, e.mirror)
	mirror := readMirror(t, e.path())
	compareMirror(t, e.src, mirror, a)
	compareMirror(t, e.src, mirror, b)
}

// Chat workspaces have no mirror; a project without a .rein directory is
// skipped with one warning and left untouched.
func TestMirrorSkipsChatAndBareProjects(t *testing.T) {
	e := newMirrorEnv(t, newMemSource(), mirror.Config{})
	chat := e.workspace(t, session.WorkspaceChat, "")
	bare := e.workspace(t, session.WorkspaceProject, t.TempDir())
	c, p := e.session(t, chat), e.session(t, bare)
	for i := range 2 {
		e.run(t, c, fmt.Sprint("chat ", i))
		e.run(t, p, fmt.Sprint("bare ", i))
	}
	waitMirror(t, e.mirror)
	if st := e.mirror.Stats(); st.Skipped < 2 || st.Synced != 0 || st.Open != 0 {
		t.Errorf("stats %+v: want both sessions skipped, none copied, no mirror open", st)
	}
	if _, err := os.Stat(filepath.Join(bare.Dir, ".rein")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the bare project got a .rein directory (%v)", err)
	}
	if _, err := os.Stat(e.path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the project's mirror was created for other workspaces' sessions (%v)", err)
	}
	if n := strings.Count(e.logs.String(), "workspace skipped"); n != 1 {
		t.Errorf("%d skip warnings, want 1:\n%s", n, e.logs)
	}
}

// A workspace whose mirror is a link is skipped: the server never writes
// where a workspace points it.
func TestMirrorRefusesLinks(t *testing.T) {
	e := newMirrorEnv(t, newMemSource(), mirror.Config{})
	target := filepath.Join(t.TempDir(), "elsewhere.db")
	if err := os.MkdirAll(filepath.Dir(e.path()), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, e.path()); err != nil {
		t.Fatal(err)
	}
	a := e.session(t, e.ws)
	e.run(t, a, "hello")
	waitMirror(t, e.mirror)
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link's target was written (%v)", err)
	}
	if !strings.Contains(e.logs.String(), "not a regular file") {
		t.Errorf("no warning naming the link:\n%s", e.logs)
	}
}

// seedStore fills a store with the sessions a rebuild must reproduce: a
// plain one, a fork, a log rewritten (seqs from 4), one of another
// directory and one without a workspace.
func seedStore(t testing.TB, src source, ws *session.Workspace) (mine, others []string) {
	t.Helper()
	ctx := context.Background()
	msg := func(text string) session.Entry {
		m := llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.Text{Text: text}}}
		return session.Entry{Kind: session.KindMessage, Message: &m}
	}
	create := func(s *session.Session, n int) string {
		if err := src.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if _, err := src.Append(ctx, s.ID, msg(fmt.Sprint(s.ID, " ", i))); err != nil {
				t.Fatal(err)
			}
		}
		return s.ID
	}
	plain := create(&session.Session{Caller: "alice", Workspace: ws.ID, WorkDir: ws.Dir, Title: "plain"}, 5)
	fork, err := src.Fork(ctx, plain, 3)
	if err != nil {
		t.Fatal(err)
	}
	rewritten := create(&session.Session{Caller: "alice", Workspace: ws.ID, WorkDir: ws.Dir}, 3)
	if err := src.Rewrite(ctx, rewritten, []session.Entry{msg("summary"), msg("next")}); err != nil {
		t.Fatal(err)
	}
	empty := create(&session.Session{Caller: "alice", Workspace: ws.ID, WorkDir: ws.Dir}, 0)
	otherWS := &session.Workspace{Caller: "alice", Kind: session.WorkspaceProject, Dir: t.TempDir()}
	if err := src.CreateWorkspace(ctx, otherWS); err != nil {
		t.Fatal(err)
	}
	far := create(&session.Session{Caller: "alice", Workspace: otherWS.ID, WorkDir: otherWS.Dir}, 2)
	loose := create(&session.Session{WorkDir: ws.Dir}, 2)
	return []string{plain, fork.ID, rewritten, empty}, []string{far, loose}
}

// Rebuild reproduces the store exactly (seqs of forks and rewritten logs
// included), leaves other directories' sessions out, and a reader opening
// the mirror meanwhile sees the old file or the new one.
func TestMirrorRebuild(t *testing.T) {
	src := newMemSource()
	e := newMirrorEnv(t, src, mirror.Config{})
	mine, _ := seedStore(t, src, e.ws)
	ctx := context.Background()
	res, err := e.mirror.Rebuild(ctx, e.ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != e.path() || res.Sessions != len(mine) || res.Entries != 5+3+2 || len(res.Skipped) != 0 {
		t.Errorf("rebuild: %+v", res)
	}
	check := func(ids []string) {
		t.Helper()
		mirror, err := sqlite.Open(e.path(), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer mirror.Close()
		if d := cmp.Diff(sortedCopy(ids), mirrorIDs(t, mirror)); d != "" {
			t.Errorf("sessions (-want +got):\n%s", d)
		}
		for _, id := range ids {
			compareMirror(t, src, mirror, id)
		}
	}
	check(mine)

	more, more2 := e.session(t, e.ws), e.session(t, e.ws)
	if _, err := src.Append(ctx, more, session.Entry{Kind: session.KindFocus, Focus: json.RawMessage(`{"goal":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := src.Delete(ctx, mine[3]); err != nil {
		t.Fatal(err)
	}
	now := append(append([]string(nil), mine[:3]...), more, more2)
	var stop atomic.Bool
	var seen sync.Map // session counts a reader saw
	var readers sync.WaitGroup
	readers.Go(func() {
		for !stop.Load() {
			db, err := sql.Open("sqlite", "file:"+e.path()+"?_pragma=busy_timeout(5000)")
			if err != nil {
				seen.Store("open: "+err.Error(), true)
				return
			}
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM sessions`).Scan(&n); err != nil {
				seen.Store("read: "+err.Error(), true)
			} else {
				seen.Store(n, true)
			}
			db.Close()
		}
	})
	for range 5 {
		if _, err := e.mirror.Rebuild(ctx, e.dir); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	readers.Wait()
	seen.Range(func(k, _ any) bool {
		if k != len(mine) && k != len(now) {
			t.Errorf("a reader saw %v; want %d or %d sessions", k, len(mine), len(now))
		}
		return true
	})
	check(now)
	leftovers, _ := filepath.Glob(e.path() + ".rebuild-*")
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// Rebuild refuses what is not a project workspace, with a message saying
// what to give instead.
func TestMirrorRebuildErrors(t *testing.T) {
	e := newMirrorEnv(t, newMemSource(), mirror.Config{})
	chat := e.workspace(t, session.WorkspaceChat, "")
	ctx := context.Background()
	for _, tc := range []struct{ ref, want string }{
		{chat.ID, "only project workspaces"},
		{"nosuchworkspace", "workspace nosuchworkspace"},
		{"relative/dir", "neither a workspace id nor an absolute directory"},
		{t.TempDir(), "no .rein directory"},
	} {
		if _, err := e.mirror.Rebuild(ctx, tc.ref); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Rebuild(%q) = %v, want an error containing %q", tc.ref, err, tc.want)
		}
	}
}

// racingDB is a mirror database another writer races once: its next
// append of entries lands after one the other writer slipped in.
type racingDB struct {
	mirror.DB
	race atomic.Bool
}

func (r *racingDB) Append(ctx context.Context, id string, es ...session.Entry) (int64, error) {
	if len(es) > 0 && r.race.CompareAndSwap(true, false) {
		if _, err := r.DB.Append(ctx, id, es[0]); err != nil {
			return 0, err
		}
	}
	return r.DB.Append(ctx, id, es...)
}

// A copy whose seqs drift from the store's (another writer appended) is
// dropped and copied again; so is one left starting with the placeholders
// of an interrupted reset.
func TestMirrorResetsDivergedCopies(t *testing.T) {
	src := newMemSource()
	var racing *racingDB
	open := openMirror(time.Second)
	e := newMirrorEnv(t, src, mirror.Config{Open: func(path string) (mirror.DB, error) {
		db, err := open(path)
		if err != nil {
			return nil, err
		}
		racing = &racingDB{DB: db}
		return racing, nil
	}})
	a := e.session(t, e.ws)
	e.run(t, a, "one")
	waitMirror(t, e.mirror)
	racing.race.Store(true)
	e.run(t, a, "two")
	waitMirror(t, e.mirror)
	compareMirror(t, src, readMirror(t, e.path()), a)
	if st := e.mirror.Stats(); st.Resets != 1 {
		t.Errorf("stats %+v: want one reset", st)
	}

	// A restart finds a copy starting with placeholders.
	ctx := context.Background()
	if err := e.mirror.Close(ctx); err != nil {
		t.Fatal(err)
	}
	db := readMirror(t, e.path())
	if err := db.Rewrite(ctx, a, []session.Entry{{Kind: session.KindHeal, Heal: &session.HealRecord{Report: session.Report{
		Damaged: []session.Damage{{Reason: "rein history mirror: placeholder for seqs the store no longer holds"}}}}}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	m, err := mirror.New(mirror.Config{Store: src, Ledger: src, Open: openMirror(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	m.Notify(a)
	waitMirror(t, m)
	compareMirror(t, src, readMirror(t, e.path()), a)
	if st := m.Stats(); st.Resets != 1 {
		t.Errorf("stats after the restart %+v: want one reset", st)
	}
}

// When a mirror opens, the sessions of its workspace are swept: one the
// store no longer has leaves the mirror, one that never ran is copied.
func TestMirrorSweepOnOpen(t *testing.T) {
	src := newMemSource()
	e := newMirrorEnv(t, src, mirror.Config{})
	ctx := context.Background()
	a, b := e.session(t, e.ws), e.session(t, e.ws)
	e.run(t, a, "one")
	e.run(t, b, "two")
	waitMirror(t, e.mirror)
	if err := e.mirror.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := src.Delete(ctx, b); err != nil {
		t.Fatal(err)
	}
	c := e.session(t, e.ws) // never ran, never notified
	m, err := mirror.New(mirror.Config{Store: src, Ledger: src, Open: openMirror(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	m.Notify(a)
	waitMirror(t, m)
	mirror := readMirror(t, e.path())
	if d := cmp.Diff(sortedCopy([]string{a, c}), mirrorIDs(t, mirror)); d != "" {
		t.Errorf("sessions after the sweep (-want +got):\n%s", d)
	}
	compareMirror(t, src, mirror, c)
}

// projectIn makes a project directory (with its .rein) and alice's project
// workspace of it in src.
func projectIn(t testing.TB, src memSource) (string, *session.Workspace) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".rein"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws := &session.Workspace{Caller: "alice", Kind: session.WorkspaceProject, Dir: dir}
	if err := src.CreateWorkspace(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	return dir, ws
}

// memMirror is a mirror database in memory.
type memMirror struct{ *session.MemStore }

func (memMirror) Close() error { return nil }

// Failures back off exponentially (the schedule the config gives), Notify
// never waits for a syncer stuck in I/O, and Close copies what is dirty.
func TestMirrorBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newMemSource()
		ctx := context.Background()
		dir, ws := projectIn(t, src)
		s := &session.Session{Caller: "alice", Workspace: ws.ID, WorkDir: dir}
		if err := src.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var calls []time.Time
		release := make(chan struct{})
		dst := memMirror{session.NewMemStore()}
		m, err := mirror.New(mirror.Config{Store: src, Ledger: src,
			Backoff: func(n int) time.Duration { return time.Second << (n - 1) },
			Open: func(path string) (mirror.DB, error) {
				mu.Lock()
				calls = append(calls, time.Now())
				n := len(calls)
				mu.Unlock()
				if n == 1 {
					<-release // stuck in I/O
				}
				if n <= 4 {
					return nil, errors.New("no space left on device")
				}
				return dst, os.WriteFile(path, nil, 0o600) // the file the syncer watches
			}})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		m.Notify(s.ID)
		synctest.Wait() // the syncer is stuck in Open
		for i := range 1000 {
			m.Notify(fmt.Sprint("other", i)) // returns at once
		}
		if time.Since(start) != 0 {
			t.Errorf("Notify waited %v", time.Since(start))
		}
		close(release)
		time.Sleep(time.Hour)
		synctest.Wait()
		var gaps []time.Duration
		mu.Lock()
		for i := 1; i < len(calls); i++ {
			gaps = append(gaps, calls[i].Sub(calls[i-1]))
		}
		mu.Unlock()
		if d := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}, gaps); d != "" {
			t.Errorf("waits between attempts (-want +got):\n%s", d)
		}
		if st := m.Stats(); st.Retries != 4 || st.Synced != 1 || st.Dirty != 0 || st.LastError == "" {
			t.Errorf("stats %+v", st)
		}
		if _, err := src.Append(ctx, s.ID, session.Entry{Kind: session.KindFocus, Focus: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		m.Notify(s.ID)
		if err := m.Close(ctx); err != nil {
			t.Fatal(err)
		}
		compareMirror(t, src, dst, s.ID)
		m.Notify(s.ID) // after Close: ignored
		if st := m.Stats(); st.Dirty != 0 {
			t.Errorf("a closed mirror took work: %+v", st)
		}
	})
}

// The default schedule doubles from 1 s to 5 minutes, jittered down by at
// most a fifth.
func TestMirrorBackoffSchedule(t *testing.T) {
	for n := 1; n <= 30; n++ {
		base := min(time.Second<<min(n-1, 20), 5*time.Minute)
		for range 50 {
			if d := mirror.Backoff(n); d > base || d < base-base/5 {
				t.Fatalf("MirrorBackoff(%d) = %v, want within [%v, %v]", n, d, base-base/5, base)
			}
		}
	}
}

// Close gives up at its deadline and says how much is left.
func TestMirrorCloseDeadline(t *testing.T) {
	src := newMemSource()
	blocked := make(chan struct{})
	m, err := mirror.New(mirror.Config{Store: blockingStore{src, blocked}, Ledger: src,
		Open: func(string) (mirror.DB, error) { return nil, errors.New("unused") }})
	if err != nil {
		t.Fatal(err)
	}
	m.Notify("s1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = m.Close(ctx)
	close(blocked)
	if err == nil || !strings.Contains(err.Error(), "not copied") {
		t.Errorf("Close = %v, want the sessions left", err)
	}
}

// blockingStore's Get waits for its channel or ctx.
type blockingStore struct {
	session.Store
	ch chan struct{}
}

func (b blockingStore) Get(ctx context.Context, id string) (*session.Session, error) {
	select {
	case <-b.ch:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return b.Store.Get(ctx, id)
}

// BenchmarkMirrorRebuild measures copying: 20 sessions of 200 entries
// from memory into a new SQLite mirror.
func BenchmarkMirrorRebuild(b *testing.B) {
	src := newMemSource()
	ctx := context.Background()
	dir, ws := projectIn(b, src)
	const sessions, entries = 20, 200
	for range sessions {
		s := &session.Session{Caller: "alice", Workspace: ws.ID, WorkDir: dir}
		if err := src.Create(ctx, s); err != nil {
			b.Fatal(err)
		}
		for j := range entries {
			m := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.Text{Text: strings.Repeat(fmt.Sprint("word ", j), 40)}}}
			if _, err := src.Append(ctx, s.ID, session.Entry{Kind: session.KindMessage, Message: &m}); err != nil {
				b.Fatal(err)
			}
		}
	}
	m, err := mirror.New(mirror.Config{Store: src, Ledger: src, Open: openMirror(time.Second)})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close(ctx)
	for b.Loop() {
		if _, err := m.Rebuild(ctx, ws.ID); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(sessions*entries*b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkMirrorNotify measures what a run's end costs the runner.
func BenchmarkMirrorNotify(b *testing.B) {
	src := newMemSource()
	m, err := mirror.New(mirror.Config{Store: src, Ledger: src,
		Open: func(string) (mirror.DB, error) { return nil, errors.New("unused") }})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close(context.Background())
	ids := make([]string, 1024)
	for i := range ids {
		ids[i] = fmt.Sprint("s", i)
	}
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Notify(ids[n.Add(1)%int64(len(ids))])
		}
	})
}

// barrierMirror is a mirror database in memory whose Create waits until
// want creates are in progress at once (or a second has passed).
type barrierMirror struct {
	memMirror
	want    int
	mu      sync.Mutex
	arrived int
	all     chan struct{}
	apart   atomic.Int64 // creates that waited in vain
}

func (b *barrierMirror) Create(ctx context.Context, s *session.Session) error {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.want {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
	case <-time.After(time.Second):
		b.apart.Add(1)
	}
	return b.memMirror.Create(ctx, s)
}

// Sessions whose runs end together are copied together: their writes
// reach the mirror at once, so a session/sqlite mirror commits them in
// one group (API-6, API-2), and a later change of the metadata comes with
// the new entries.
func TestMirrorCopiesTogether_API6(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newMemSource()
		ctx := context.Background()
		dir, ws := projectIn(t, src)
		dst := &barrierMirror{memMirror: memMirror{session.NewMemStore()}, want: 3, all: make(chan struct{})}
		m, err := mirror.New(mirror.Config{Store: src, Ledger: src, Open: func(path string) (mirror.DB, error) {
			return dst, os.WriteFile(path, nil, 0o600)
		}})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the syncer sleeps until notified
		var ids []string
		for i := range 3 {
			s := &session.Session{Caller: "alice", Workspace: ws.ID, WorkDir: dir, Title: fmt.Sprint("run ", i)}
			if err := src.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
			if _, err := src.Append(ctx, s.ID, session.Entry{Kind: session.KindFocus, Focus: json.RawMessage(`{}`)}); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, s.ID)
			m.Notify(s.ID)
			time.Sleep(10 * time.Millisecond) // runs ending 10 ms apart, within the gather
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := dst.apart.Load(); n > 0 {
			t.Errorf("%d of 3 sessions notified together were copied apart", n)
		}
		s, err := src.Get(ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		s.Title = "renamed"
		if err := src.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		if _, err := src.Append(ctx, s.ID, session.Entry{Kind: session.KindFocus, Focus: json.RawMessage(`{"x":1}`)}); err != nil {
			t.Fatal(err)
		}
		m.Notify(s.ID)
		if err := m.Close(ctx); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			compareMirror(t, src, dst, id)
		}
		if st := m.Stats(); st.Synced != 4 || st.Retries != 0 {
			t.Errorf("stats %+v, want 4 copies and no retry", st)
		}
	})
}
