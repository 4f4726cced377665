//go:build unix

package session

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/llm"
)

// startGroup starts script in a process group of its own and returns the
// group's id; the group is killed when the test ends.
func startGroup(t *testing.T, script string) int {
	t.Helper()
	return startGroupReady(t, script, false)
}

// startGroupReady is startGroup; with ready, it returns once the script
// printed its first line (after its traps are set, say), not before.
func startGroupReady(t *testing.T, script string, ready bool) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out io.ReadCloser
	if ready {
		var err error
		if out, err = cmd.StdoutPipe(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if ready {
		if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
			t.Fatalf("%q printed no line: %v", script, err)
		}
	}
	pgid := cmd.Process.Pid
	start := processStart(pgid)
	go cmd.Wait() // reap it, as an init process would
	// Kill it at the end only if the pid still names it: pids are reused
	// quickly, and another test's group may hold this one by then.
	t.Cleanup(func() {
		if start == 0 || processStart(pgid) == start {
			syscall.Kill(-pgid, syscall.SIGKILL)
		}
	})
	return pgid
}

// SESS-1: processes of interrupted calls that still run can be stopped:
// TERM first, KILL when TERM is ignored; a pid now naming another process
// is left alone.
func TestStopPending(t *testing.T) {
	polite := startGroup(t, "sleep 30")
	stubborn := startGroupReady(t, `trap "" TERM; echo trapped; sleep 30 & wait`, true)
	reused := startGroup(t, "sleep 30")
	start := processStart(polite)
	if start == 0 && isLinux {
		t.Fatal("no start time for a live process")
	}
	pending := []PendingCall{
		{CallID: "c1", Tool: "bash", PGID: polite, Start: start},
		{CallID: "c2", Tool: "bash", PGID: stubborn},
		{CallID: "c3", Tool: "bash", PGID: reused, Start: processStart(reused) + 1}, // recorded for an older process
		{CallID: "c4", Tool: "read_file"},
	}
	for i, p := range pending[:2] {
		if !groupAlive(p.PGID, p.Start) {
			t.Fatalf("pending %d: group not seen alive", i)
		}
	}
	if isLinux && groupAlive(reused, pending[2].Start) {
		t.Error("a group whose leader started at another time was taken for the recorded one")
	}
	began := time.Now()
	if err := StopPending(context.Background(), pending); err != nil {
		t.Fatal(err)
	}
	if groupAlive(polite, 0) || groupAlive(stubborn, 0) {
		t.Error("StopPending left a group running")
	}
	if took := time.Since(began); took < StopGrace {
		t.Errorf("a group ignoring TERM was stopped after %v, before the %v grace", took, StopGrace)
	}
	if isLinux && !groupAlive(reused, 0) {
		t.Error("StopPending killed a group it did not start")
	}
}

// crashedWith returns a store holding session "s" cut off while a bash call
// ran the process group pgid (started at start).
func crashedWith(t *testing.T, pgid int, start uint64) *MemStore {
	t.Helper()
	ctx := context.Background()
	store := NewMemStore()
	if err := store.Create(ctx, &Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	user := llm.UserText("build it")
	asst := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		&llm.ToolUse{ID: "c1", Name: "bash", Input: []byte(`{"command":"make"}`)},
	}}
	_, err := store.Append(ctx, "s",
		Entry{Kind: KindMessage, Message: &user},
		Entry{Kind: KindMessage, Message: &asst},
		Entry{Kind: KindToolStart, ToolStart: &ToolStart{CallID: "c1", Tool: "bash"}},
		Entry{Kind: KindToolProcess, ToolProcess: &ToolProcess{CallID: "c1", PGID: pgid, Start: start}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// resultText returns the text of call id's result in msgs.
func resultText(t *testing.T, msgs []llm.Message, id string) string {
	t.Helper()
	if err := llm.CheckPairing(msgs); err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		for _, r := range m.ToolResults() {
			if r.ToolUseID == id {
				return llm.Message{Content: r.Content}.TextOf()
			}
		}
	}
	t.Fatalf("no result for %s", id)
	return ""
}

func waitGone(t *testing.T, pgid int) {
	t.Helper()
	for i := 0; groupAlive(pgid, 0); i++ {
		if i > 250 {
			t.Fatalf("process group %d still alive", pgid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// SESS-2, SESS-1: the result healing gives a call whose process group still
// runs says so, with the group's id, so the model does not start the command
// again; once the group is gone, healing (and a stored repair, reloaded)
// says it is no longer running.
func TestSESS2HealTellsProcessState(t *testing.T) {
	ctx := context.Background()
	pgid := startGroup(t, "sleep 30")
	store := crashedWith(t, pgid, processStart(pgid))

	st, err := Load(ctx, store, "s")
	if err != nil {
		t.Fatal(err)
	}
	text := resultText(t, st.Messages, "c1")
	if text != ProcessText(pgid, true) || !strings.Contains(text, "STILL RUNNING") || !strings.Contains(text, strconv.Itoa(pgid)) {
		t.Errorf("running group: result %q", text)
	}
	if strings.Contains(text, "was stopped") {
		t.Errorf("running group: result %q claims it was stopped", text)
	}
	if len(st.Pending) != 1 || !st.Pending[0].Alive {
		t.Fatalf("pending = %+v, want c1 alive", st.Pending)
	}
	// Resume: the repair is stored with the "still running" text.
	if err := SaveHeal(ctx, store, "s", st); err != nil {
		t.Fatal(err)
	}

	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pgid)
	st, err = Load(ctx, store, "s")
	if err != nil {
		t.Fatal(err)
	}
	text = resultText(t, st.Messages, "c1")
	if text != ProcessText(pgid, false) || !strings.Contains(text, "no longer running") {
		t.Errorf("gone group, stored repair: result %q", text)
	}
	if len(st.Pending) != 0 {
		t.Errorf("pending = %+v, want none once the repaired call's group is gone", st.Pending)
	}
	if !st.Heal.Empty() {
		t.Errorf("reloading a repaired session reported %s", st.Heal.String())
	}

	// A fresh crash whose group is already gone says so at once.
	st, err = Load(ctx, crashedWith(t, pgid, processStart(pgid)), "s")
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(t, st.Messages, "c1"); text != ProcessText(pgid, false) {
		t.Errorf("gone group: result %q", text)
	}
}

// SESS-1, SESS-2: after StopPending, Recheck updates both Alive and the
// healed result, so the conversation no longer says the command runs: it
// says rein stopped it, and a stored repair keeps saying so on reload.
func TestSESS2RecheckAfterStop(t *testing.T) {
	ctx := context.Background()
	pgid := startGroup(t, "sleep 30")
	store := crashedWith(t, pgid, processStart(pgid))
	st, err := Load(ctx, store, "s")
	if err != nil {
		t.Fatal(err)
	}
	before := st.Messages
	if err := StopPending(ctx, st.Pending); err != nil {
		t.Fatal(err)
	}
	if !st.Pending[0].Stopped {
		t.Error("StopPending did not mark the call it stopped")
	}
	st.Recheck()
	if st.Pending[0].Alive {
		t.Error("Recheck left Alive set after the group was stopped")
	}
	text := resultText(t, st.Messages, "c1")
	if text != StoppedText(pgid) || strings.Contains(text, "STILL RUNNING") || !strings.Contains(text, "rein stopped it") {
		t.Errorf("after stop: result %q", text)
	}
	if resultText(t, before, "c1") != ProcessText(pgid, true) {
		t.Error("Recheck modified the messages it was given instead of copying them")
	}
	// The resume stores the repair; reloading keeps "stopped" (the group is
	// gone either way, and "stopped" says more).
	if err := SaveHeal(ctx, store, "s", st); err != nil {
		t.Fatal(err)
	}
	again, err := Load(ctx, store, "s")
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(t, again.Messages, "c1"); text != StoppedText(pgid) {
		t.Errorf("reloaded after stop: result %q, want the stopped text", text)
	}
	if len(again.Pending) != 0 {
		t.Errorf("reloaded after stop: pending %+v, want none", again.Pending)
	}
}

// SESS-1: restating a stored repair keeps "rein stopped it" once the group
// is gone, moves "still running" to "no longer running" (and back, for a
// group with no recorded leader start that runs again), and never touches a
// text healing did not write.
func TestSESS2StoppedTextRestate(t *testing.T) {
	for _, tc := range []struct {
		name, stored, want, kept string
	}{
		{"stopped stays stopped", StoppedText(7), ProcessText(7, false), StoppedText(7)},
		{"running becomes gone", ProcessText(7, true), ProcessText(7, false), ProcessText(7, false)},
		{"gone becomes running (pid start unknown)", ProcessText(7, false), ProcessText(7, true), ProcessText(7, true)},
		{"a model-made text is left alone", "interrupted: rein stopped it, honest", ProcessText(7, false), "interrupted: rein stopped it, honest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{&llm.ToolUse{ID: "c1", Name: "bash", Input: []byte(`{}`)}}}, {Role: llm.RoleUser, Content: []llm.Block{&llm.ToolResult{ToolUseID: "c1", IsError: true,
				Content: []llm.Block{&llm.Text{Text: tc.stored}}}}}}
			if got := resultText(t, restate(msgs, map[string]string{"c1": tc.want}), "c1"); got != tc.kept {
				t.Errorf("restate(%q → %q) = %q, want %q", tc.stored, tc.want, got, tc.kept)
			}
		})
	}
}
