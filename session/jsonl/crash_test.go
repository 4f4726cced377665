//go:build unix

package jsonl_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/jsonl"
)

// The crash tests re-execute the test binary as a child that writes a
// session and is killed with SIGKILL; these variables tell the child what
// to do.
const (
	appenderEnv = "REIN_JSONL_APPENDER_DIR"
	toolCallEnv = "REIN_JSONL_TOOLCALL_DIR"
)

// TestHelperAppender is the child of TestCrashAppend, not a test: it
// appends batches of entries to session "s" forever and prints the last seq
// of each batch once Append returned.
func TestHelperAppender(t *testing.T) {
	dir := os.Getenv(appenderEnv)
	if dir == "" {
		t.Skip("the child process of TestCrashAppend")
	}
	st, err := jsonl.New(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 1))
	for i := 0; ; i++ {
		batch := make([]session.Entry, 1+rng.IntN(3))
		for k := range batch {
			// Mostly short lines; one in eight up to 12 KB, spanning pages,
			// so a kill can cut a write.
			n := rng.IntN(200)
			if rng.IntN(8) == 0 {
				n = rng.IntN(12000)
			}
			m := llm.UserText(fmt.Sprintf("%d/%d %s", i, k, strings.Repeat("x", n)))
			batch[k] = session.Entry{Kind: session.KindMessage, Message: &m}
		}
		last, err := st.Append(ctx, "s", batch...)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		// os.Stdout is unbuffered: one write a line.
		fmt.Fprintf(os.Stdout, "%d\n", last)
	}
}

// child starts the test binary running one helper test with env set.
func child(t *testing.T, helper, env string) (*exec.Cmd, io.ReadCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+helper+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill() // in case the test failed before killing it
		cmd.Wait()
	})
	return cmd, out
}

// SESS-1: a process killed with SIGKILL at random moments while appending
// leaves a log that loads, holding every entry an Append had acknowledged;
// seqs stay contiguous as the next writer cuts a torn tail off.
func TestCrashAppend(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary 200 times")
	}
	dir := t.TempDir()
	st, err := jsonl.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	const iterations = 200
	var acked, verified int64
	torn := 0
	for i := range iterations {
		cmd, out := child(t, "TestHelperAppender", appenderEnv+"="+dir)
		lines := make(chan int64, 1024)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if n, err := strconv.ParseInt(sc.Text(), 10, 64); err == nil {
					lines <- n
				}
			}
		}()
		// Let the child reach its loop, then kill it at a random moment.
		if n, ok := <-lines; ok {
			acked = max(acked, n)
		}
		time.Sleep(time.Duration(rng.IntN(20_001)) * time.Microsecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for n := range lines {
			acked = max(acked, n)
		}
		_ = cmd.Wait()

		if cmd.ProcessState.ExitCode() == 2 {
			t.Fatalf("iteration %d: the child failed", i)
		}
		n, last := checkAfterCrash(t, dir, acked, verified, i, i%20 == 19 || i == iterations-1)
		torn, verified = torn+n, last
		if t.Failed() {
			return
		}
	}
	t.Logf("%d kills, %d entries acknowledged, %d torn tails found and healed", iterations, acked, torn)
}

// checkAfterCrash reads the session with a fresh store and checks that
// every acknowledged seq after verified is there, in order, with at most a
// torn last line; with load, it loads the whole session and checks it all.
// It returns the torn lines found and the last seq read.
func checkAfterCrash(t *testing.T, dir string, acked, verified int64, iter int, load bool) (torn int, seq int64) {
	t.Helper()
	st, err := jsonl.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if load {
		verified = 0
	}
	seq = verified
	for e, err := range st.Entries(ctx, "s", verified) {
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		if e.Seq == 0 {
			if r := e.Heal.Report.Damaged[0].Reason; !strings.HasPrefix(r, "torn last line") {
				t.Errorf("iteration %d: damage other than a torn last line: %+v", iter, e.Heal.Report.Damaged)
			}
			torn++
			continue
		}
		if e.Seq != seq+1 {
			t.Errorf("iteration %d: seq %d follows %d", iter, e.Seq, seq)
		}
		seq = e.Seq
	}
	if seq < acked {
		t.Errorf("iteration %d: the log ends at seq %d, but Append acknowledged %d", iter, seq, acked)
	}
	if !load {
		return torn, seq
	}
	state, err := session.Load(ctx, st, "s")
	if err != nil {
		t.Fatalf("iteration %d: Load: %v", iter, err)
	}
	if state.LastSeq != seq || state.Heal.Changed() {
		t.Errorf("iteration %d: Load: last seq %d (want %d), heal %s", iter, state.LastSeq, seq, state.Heal.String())
	}
	return torn, seq
}

// TestHelperToolCall is the child of TestInterruptedToolCall, not a test:
// it records a run that starts `sleep 30` in its own process group as the
// bash tool would, prints the group id and waits to be killed.
func TestHelperToolCall(t *testing.T) {
	dir := os.Getenv(toolCallEnv)
	if dir == "" {
		t.Skip("the child process of TestInterruptedToolCall")
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	st, err := jsonl.New(dir)
	if err != nil {
		fail(err)
	}
	rec := runner.NewRecorder(st, "s")
	input := json.RawMessage(`{"command":"sleep 30"}`)
	prompt := llm.UserText("wait a bit")
	reply := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.Text{Text: "Waiting."},
		&llm.ToolUse{ID: "call_1", Name: "bash", Input: input}}}
	now := time.Now()
	for _, ev := range []agent.Event{
		{Type: agent.EventRunStart, RunID: "r1", Time: now, RunStart: &agent.RunStart{Model: "m"}},
		{Type: agent.EventMessage, RunID: "r1", Time: now, Message: &prompt},
		{Type: agent.EventMessage, RunID: "r1", Time: now, Message: &reply},
		{Type: agent.EventToolStart, RunID: "r1", Time: now, Tool: &agent.ToolEvent{ID: "call_1", Name: "bash", Input: input}},
	} {
		if err := rec.Record(ctx, ev); err != nil {
			fail(err)
		}
	}
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	if err := rec.RecordProcess("call_1", cmd.Process.Pid); err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stdout, "%d\n", cmd.Process.Pid)
	time.Sleep(time.Minute)
	os.Exit(3)
}

// SESS-1, SESS-2: a process killed while a tool call runs leaves a session
// whose call is answered "interrupted … still running (process group N)", and whose
// still-running process group is listed as pending and can be stopped.
func TestInterruptedToolCall(t *testing.T) {
	dir := t.TempDir()
	st, err := jsonl.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	pgid := crashDuringToolCall(t, st, dir)

	state, err := session.Load(ctx, st, "s")
	if err != nil {
		t.Fatal(err)
	}
	last := state.Messages[len(state.Messages)-1]
	results := last.ToolResults()
	if len(results) != 1 || results[0].ToolUseID != "call_1" || !results[0].IsError {
		t.Fatalf("last message %+v, want an error result for call_1", last)
	}
	if text := (llm.Message{Content: results[0].Content}).TextOf(); text != session.ProcessText(pgid, true) || !strings.Contains(text, "STILL RUNNING") {
		t.Errorf("result text %q", text)
	}
	if err := llm.CheckPairing(state.Messages); err != nil {
		t.Error(err)
	}
	if len(state.Pending) != 1 {
		t.Fatalf("pending %+v, want call_1", state.Pending)
	}
	p := state.Pending[0]
	if p.CallID != "call_1" || p.Tool != "bash" || p.RunID != "r1" || p.PGID != pgid || !p.Alive || string(p.Input) != `{"command":"sleep 30"}` {
		t.Errorf("pending %+v, want call_1 (bash, run r1) with live group %d", p, pgid)
	}
	if p.Start == 0 && runtimeLinux {
		t.Errorf("the group leader's start time was not recorded")
	}

	// A resume stores the repair before anyone stopped the group: the call
	// is answered, but its still-running group stays pending, so a later
	// `--kill-orphans` finds it.
	if err := runner.NewRecorder(st, "s").RecordHeal(ctx, state); err != nil {
		t.Fatal(err)
	}
	resumed, err := session.Load(ctx, st, "s")
	if err != nil {
		t.Fatal(err)
	}
	if !resumed.Heal.Empty() || len(resumed.Pending) != 1 || !resumed.Pending[0].Alive {
		t.Fatalf("after a stored repair: heal %q, pending %+v; want clean, call_1 still alive", resumed.Heal.String(), resumed.Pending)
	}
	if err := session.StopPending(ctx, resumed.Pending); err != nil {
		t.Fatalf("StopPending: %v", err)
	}
	again, err := session.Load(ctx, st, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Pending) != 0 {
		t.Errorf("after StopPending: %+v, want nothing pending (answered and stopped)", again.Pending)
	}
	// SESS-2: the stored repair said the group ran; it no longer does.
	if text := again.Messages[len(again.Messages)-1].ToolResults()[0]; (llm.Message{Content: text.Content}).TextOf() != session.ProcessText(pgid, false) {
		t.Errorf("after StopPending: result %q, want it to say the group is gone", (llm.Message{Content: text.Content}).TextOf())
	}
	if err := session.StopPending(ctx, again.Pending); err != nil {
		t.Errorf("StopPending of a stopped group: %v", err)
	}
	// Resuming stores the heal: the next load is clean.
	if err := runner.NewRecorder(st, "s").RecordHeal(ctx, again); err != nil {
		t.Fatal(err)
	}
	clean, err := session.Load(ctx, st, "s")
	if err != nil {
		t.Fatal(err)
	}
	if !clean.Heal.Empty() || len(clean.Pending) != 0 || len(clean.Messages) != len(again.Messages) {
		t.Errorf("after RecordHeal: heal %q, pending %v, %d messages", clean.Heal.String(), clean.Pending, len(clean.Messages))
	}
}

// crashDuringToolCall runs TestHelperToolCall on session "s" of dir, checks
// that the session is locked while it runs, kills it, and returns the
// process group of the call it left running (killed when the test ends).
func crashDuringToolCall(t *testing.T, st *jsonl.Store, dir string) int {
	t.Helper()
	cmd, out := child(t, "TestHelperToolCall", toolCallEnv+"="+dir)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child printed no process group: %v", err)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pgid <= 1 {
		t.Fatalf("bad process group %q", line)
	}
	// Stop it at the end only if the pid still names that process: pids are
	// reused quickly here, and another test's group may hold it by then.
	start := session.ProcessStart(pgid)
	t.Cleanup(func() {
		_ = session.StopPending(ctx, []session.PendingCall{{CallID: "cleanup", PGID: pgid, Start: start}})
	})
	// While the child lives it holds the session: writing here is refused,
	// naming it.
	_, err = st.Append(ctx, "s", userEntry("intruder"))
	if !errors.Is(err, session.ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("process %d", cmd.Process.Pid)) {
		t.Errorf("Append while the child holds the session: %v; want ErrLocked naming pid %d", err, cmd.Process.Pid)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	return pgid
}
