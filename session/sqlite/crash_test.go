//go:build unix

package sqlite_test

import (
	"bufio"
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
// TestCrash kills: it holds the database's path.
const writerEnv = "REIN_SQLITE_CRASH_DB"

// TestHelperWriter is the child of TestCrash, not a test: it appends
// batches of entries to session "s" and creates queued runs, forever,
// printing "e <last seq>" once an Append returned and "r <run id>" once a
// CreateRun did.
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
	pid := os.Getpid()
	rng := rand.New(rand.NewPCG(uint64(pid), 1))
	for i := 0; ; i++ {
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
		last, err := st.Append(ctx, "s", batch...)
		if err != nil {
			fail(err)
		}
		fmt.Fprintf(os.Stdout, "e %d\n", last) // os.Stdout is unbuffered: one write a line
		r := &session.Run{SessionID: "s", Caller: "crash", Prompt: fmt.Sprint(i)}
		if err := st.CreateRun(ctx, r); err != nil {
			fail(err)
		}
		fmt.Fprintf(os.Stdout, "r %s\n", r.ID)
	}
}

// SESS-1, API-3, API-5: a process killed with SIGKILL at random moments
// while writing leaves a database that opens and passes SQLite's integrity
// check, holding every entry an Append acknowledged and every run a
// CreateRun did, with no batch cut in two.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary 40 times")
	}
	path := filepath.Join(t.TempDir(), "rein.db")
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	const iterations = 40
	var acked int64
	var runs []string
	for i := range iterations {
		lines := killWriter(t, path, time.Duration(rng.IntN(30_001))*time.Microsecond)
		var iterRuns []string
		for _, l := range lines {
			kind, val, _ := strings.Cut(l, " ")
			switch kind {
			case "e":
				n, _ := strconv.ParseInt(val, 10, 64)
				acked = max(acked, n)
			case "r":
				iterRuns = append(iterRuns, val)
			}
		}
		runs = append(runs, iterRuns...)
		checkAfterCrash(t, path, i, acked, iterRuns)
		if t.Failed() {
			return
		}
	}
	t.Logf("%d kills; %d entries and %d runs acknowledged", iterations, acked, len(runs))
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

// killWriter runs TestHelperWriter on path, lets it write for about wait
// once it has printed its first line, kills it with SIGKILL and returns
// every line it printed.
func killWriter(t *testing.T, path string, wait time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
	cmd.Env = append(os.Environ(), writerEnv+"="+path)
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
// intact, every acknowledged entry there with seqs 1, 2, 3, …, each batch
// whole, each run acknowledged in the iteration there.
func checkAfterCrash(t *testing.T, path string, iter int, acked int64, runs []string) {
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
	var seq int64
	batches := map[string]int{} // "pid/i" → entries seen
	sizes := map[string]int{}
	for e, err := range st.Entries(ctx, "s", 0) {
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		if e.Seq != seq+1 {
			t.Fatalf("iteration %d: seq %d follows %d (damage: %+v)", iter, e.Seq, seq, e.Heal)
		}
		seq = e.Seq
		var pid, i, k, n int
		if _, err := fmt.Sscanf(e.Message.TextOf(), "%d/%d/%d/%d", &pid, &i, &k, &n); err != nil {
			t.Fatalf("iteration %d: entry %d: %v", iter, e.Seq, err)
		}
		key := fmt.Sprint(pid, "/", i)
		if k != batches[key] {
			t.Errorf("iteration %d: entry %d is number %d of batch %s, want %d", iter, e.Seq, k, key, batches[key])
		}
		batches[key]++
		sizes[key] = n
	}
	if seq < acked {
		t.Errorf("iteration %d: the log ends at seq %d, but Append acknowledged %d", iter, seq, acked)
	}
	for key, n := range batches {
		if n != sizes[key] {
			t.Errorf("iteration %d: batch %s has %d of its %d entries", iter, key, n, sizes[key])
		}
	}
	for _, id := range runs {
		if _, err := st.GetRun(ctx, id); err != nil {
			t.Errorf("iteration %d: acknowledged run %s: %v", iter, id, err)
		}
	}
}
