//go:build unix

package sqlite_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/sqlite"
)

// writerEnv tells the re-executed test binary to be the writer that
// TestCrash kills: it holds the database's path. writersEnv, when set,
// is how many goroutines write at once (TestCrashGroupCommit).
const (
	writerEnv  = "REIN_SQLITE_CRASH_DB"
	writersEnv = "REIN_SQLITE_CRASH_WRITERS"
)

// crashSessions are the sessions n writers append to: "s" for one, else
// "s0", "s1", … (the parent creates them).
func crashSessions(n int) []string {
	if n <= 1 {
		return []string{"s"}
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint("s", i)
	}
	return ids
}

// TestHelperWriter is the child of TestCrash, not a test: each of its
// writers appends batches of entries to its own session and creates
// queued runs, forever, printing "e <session> <last seq>" once an Append
// returned and "r <run id>" once a CreateRun did.
func TestHelperWriter(t *testing.T) {
	path := os.Getenv(writerEnv)
	if path == "" {
		t.Skip("the child process of TestCrash")
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		fail(err)
	}
	writers, _ := strconv.Atoi(os.Getenv(writersEnv))
	pid := os.Getpid()
	for g, id := range crashSessions(writers) {
		go func() {
			rng := rand.New(rand.NewPCG(uint64(pid), uint64(g)))
			lastEvent, err := st.LastEventID(ctx, id)
			if err != nil {
				fail(err)
			}
			for i := 0; ; i++ {
				if i%2 == 1 { // an event with the entries it brings, in one write
					n := 1 + rng.IntN(2)
					batch := make([]session.Entry, n)
					for k := range batch {
						m := llm.UserText(fmt.Sprintf("%d/%d/%d/%d event", pid, i, k, n))
						batch[k] = session.Entry{Kind: session.KindMessage, Message: &m}
					}
					lastEvent++
					data := fmt.Sprintf(`{"key":"%d/%d"}`, pid, i)
					if err := st.WriteEvent(ctx, session.EventWrite{Event: session.Event{SessionID: id, ID: lastEvent, RunID: "r",
						Type: "message", Data: json.RawMessage(data)}, Log: &session.LogAppend{Entries: batch}}); err != nil {
						fail(err)
					}
					fmt.Fprintf(os.Stdout, "v %s %d\n", id, lastEvent)
					continue
				}
				batch := make([]session.Entry, 1+rng.IntN(3))
				for k := range batch {
					// Mostly short entries; one in eight up to 12 KB, spanning pages.
					n := rng.IntN(200)
					if rng.IntN(8) == 0 {
						n = rng.IntN(12000)
					}
					m := llm.UserText(fmt.Sprintf("%d/%d/%d/%d %s", pid, i, k, len(batch), strings.Repeat("x", n)))
					batch[k] = session.Entry{Kind: session.KindMessage, Message: &m}
				}
				last, err := st.Append(ctx, id, batch...)
				if err != nil {
					fail(err)
				}
				fmt.Fprintf(os.Stdout, "e %s %d\n", id, last) // os.Stdout is unbuffered: one write a line
				r := &session.Run{SessionID: id, Caller: "crash", Prompt: fmt.Sprint(i)}
				if err := st.CreateRun(ctx, r); err != nil {
					fail(err)
				}
				fmt.Fprintf(os.Stdout, "r %s\n", r.ID)
			}
		}()
	}
	select {}
}

// SESS-1, API-3, API-5: a process killed with SIGKILL at random moments
// while writing leaves a database that opens and passes SQLite's integrity
// check, holding every entry an Append acknowledged and every run a
// CreateRun did, with no batch cut in two; and every event a WriteEvent
// acknowledged, each stored event with the log entries it brought and no
// such entries without their event.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary 40 times")
	}
	crashTest(t, 1, 40, 30*time.Millisecond)
}

// SESS-1, API-2: the same with 8 goroutines writing at once, so the kill
// lands while the store commits the writes of several sessions in one
// transaction (group commit): every write acknowledged to any of them is
// there, and no write is there in part.
func TestCrashGroupCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary 30 times")
	}
	crashTest(t, 8, 30, 100*time.Millisecond)
}

// crashTest kills a writer of n goroutines iterations times, each at a
// random moment within maxWait of its first acknowledged write, and
// checks the database after each kill.
func crashTest(t *testing.T, writers, iterations int, maxWait time.Duration) {
	path := filepath.Join(t.TempDir(), "rein.db")
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := crashSessions(writers)
	for _, id := range ids {
		if err := st.Create(ctx, &session.Session{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	acked, ackedEvents := map[string]int64{}, map[string]int64{}
	var runs []string
	for i := range iterations {
		lines := killWriter(t, path, writers, time.Duration(rng.Int64N(int64(maxWait)+1)))
		var iterRuns []string
		for _, l := range lines {
			f := strings.Fields(l)
			switch {
			case len(f) == 3 && f[0] == "e":
				n, _ := strconv.ParseInt(f[2], 10, 64)
				acked[f[1]] = max(acked[f[1]], n)
			case len(f) == 2 && f[0] == "r":
				iterRuns = append(iterRuns, f[1])
			case len(f) == 3 && f[0] == "v":
				n, _ := strconv.ParseInt(f[2], 10, 64)
				ackedEvents[f[1]] = max(ackedEvents[f[1]], n)
			default:
				t.Fatalf("iteration %d: the writer printed %q", i, l)
			}
		}
		runs = append(runs, iterRuns...)
		checkAfterCrash(t, path, i, ids, acked, iterRuns)
		checkEventsAfterCrash(t, path, i, ids, ackedEvents)
		if t.Failed() {
			return
		}
	}
	var entries int64
	for _, n := range acked {
		entries += n
	}
	var events int64
	for _, n := range ackedEvents {
		events += n
	}
	t.Logf("%d kills of %d writers; %d entries, %d runs and %d events acknowledged", iterations, writers, entries, len(runs), events)
	// Every run ever acknowledged is still there, queued.
	st, err = sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, id := range runs {
		if r, err := st.GetRun(ctx, id); err != nil || r.Status != session.RunQueued {
			t.Errorf("acknowledged run %s: %+v, %v", id, r, err)
		}
	}
}

// killWriter runs TestHelperWriter on path with n writers, lets it write
// for about wait once it has printed its first line, kills it with
// SIGKILL and returns every line it printed.
func killWriter(t *testing.T, path string, writers int, wait time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
	cmd.Env = append(os.Environ(), writerEnv+"="+path, writersEnv+"="+strconv.Itoa(writers))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var got []string
	if l, ok := <-lines; ok {
		got = append(got, l)
	}
	time.Sleep(wait)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for l := range lines {
		got = append(got, l)
	}
	_ = cmd.Wait()
	if cmd.ProcessState.ExitCode() == 2 {
		t.Fatalf("the writer failed")
	}
	return got
}

// checkAfterCrash opens the database as a new process would and checks it:
// intact, every acknowledged entry of each session there with seqs 1, 2,
// 3, …, each batch whole, each run acknowledged in the iteration there.
func checkAfterCrash(t *testing.T, path string, iter int, ids []string, acked map[string]int64, runs []string) {
	t.Helper()
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatalf("iteration %d: Open: %v", iter, err)
	}
	defer st.Close()
	var integrity string
	if err := rawDB(t, path).QueryRow(`PRAGMA integrity_check`).Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("iteration %d: integrity check: %q, %v", iter, integrity, err)
	}
	for _, id := range ids {
		var seq int64
		batches := map[string]int{} // "pid/i" → entries seen
		sizes := map[string]int{}
		for e, err := range st.Entries(ctx, id, 0) {
			if err != nil {
				t.Fatalf("iteration %d: session %s: %v", iter, id, err)
			}
			if e.Seq != seq+1 {
				t.Fatalf("iteration %d: session %s: seq %d follows %d (damage: %+v)", iter, id, e.Seq, seq, e.Heal)
			}
			seq = e.Seq
			var pid, i, k, n int
			if _, err := fmt.Sscanf(e.Message.TextOf(), "%d/%d/%d/%d", &pid, &i, &k, &n); err != nil {
				t.Fatalf("iteration %d: session %s: entry %d: %v", iter, id, e.Seq, err)
			}
			key := fmt.Sprint(pid, "/", i)
			if k != batches[key] {
				t.Errorf("iteration %d: session %s: entry %d is number %d of batch %s, want %d", iter, id, e.Seq, k, key, batches[key])
			}
			batches[key]++
			sizes[key] = n
		}
		if seq < acked[id] {
			t.Errorf("iteration %d: the log of session %s ends at seq %d, but Append acknowledged %d", iter, id, seq, acked[id])
		}
		for key, n := range batches {
			if n != sizes[key] {
				t.Errorf("iteration %d: session %s: batch %s has %d of its %d entries", iter, id, key, n, sizes[key])
			}
		}
	}
	for _, id := range runs {
		if _, err := st.GetRun(ctx, id); err != nil {
			t.Errorf("iteration %d: acknowledged run %s: %v", iter, id, err)
		}
	}
}

// checkEventsAfterCrash checks the events the writers stored with log
// entries (EventWrite.Log): every acknowledged one is there, and an
// event's entries are in the log exactly when the event is stored.
func checkEventsAfterCrash(t *testing.T, path string, iter int, ids []string, acked map[string]int64) {
	t.Helper()
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatalf("iteration %d: Open: %v", iter, err)
	}
	defer st.Close()
	for _, id := range ids {
		evs, err := st.Events(ctx, id, 0, 0)
		if err != nil {
			t.Fatalf("iteration %d: session %s: %v", iter, id, err)
		}
		stored := map[string]bool{}
		var last int64
		for _, e := range evs {
			var d struct{ Key string }
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatalf("iteration %d: session %s: event %d: %v", iter, id, e.ID, err)
			}
			stored[d.Key] = true
			last = e.ID
		}
		if last < acked[id] {
			t.Errorf("iteration %d: the events of session %s end at %d, but WriteEvent acknowledged %d", iter, id, last, acked[id])
		}
		logged := map[string]bool{}
		for e, err := range st.Entries(ctx, id, 0) {
			if err != nil {
				t.Fatalf("iteration %d: session %s: %v", iter, id, err)
			}
			var pid, i, k, n int
			if text := e.Message.TextOf(); strings.HasSuffix(text, " event") {
				if _, err := fmt.Sscanf(text, "%d/%d/%d/%d", &pid, &i, &k, &n); err != nil {
					t.Fatalf("iteration %d: session %s: entry %d: %v", iter, id, e.Seq, err)
				}
				logged[fmt.Sprint(pid, "/", i)] = true
			}
		}
		for key := range stored {
			if !logged[key] {
				t.Errorf("iteration %d: session %s: event %s is stored without its log entries", iter, id, key)
			}
		}
		for key := range logged {
			if !stored[key] {
				t.Errorf("iteration %d: session %s: the log entries of event %s are stored without it", iter, id, key)
			}
		}
	}
}
