package runner

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/builtin"
)

// TOOL-8: a Service keeps the jobs of at most keepIdleJobs idle sessions
// (no job running, no run using them), forgetting the least recently
// used; a session a run still uses is never forgotten, and a closed
// registry hands out none.
func TestJobRegistryBounded_TOOL8(t *testing.T) {
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	r := newJobRegistry(slog.New(slog.DiscardHandler), func() time.Time { now = now.Add(time.Second); return now })
	dir := t.TempDir()
	open := func(onStart func(tool.Call, string, int)) *builtin.Jobs {
		return builtin.NewJobs(builtin.JobsOptions{Dir: dir, OnStart: onStart})
	}
	busy, releaseBusy := r.acquire("busy", nil, open)
	for i := range keepIdleJobs + 5 {
		_, release := r.acquire(fmt.Sprintf("s%d", i), nil, open)
		release()
		release() // twice: counted once
	}
	r.mu.Lock()
	n := len(r.entries)
	_, oldest := r.entries["s0"]
	_, newest := r.entries[fmt.Sprintf("s%d", keepIdleJobs+4)]
	held := r.entries["busy"]
	r.mu.Unlock()
	if n != keepIdleJobs+1 || oldest || !newest || held == nil || held.jobs != busy {
		t.Fatalf("%d sessions kept (want %d), oldest kept %v, newest kept %v, the busy one %v", n, keepIdleJobs+1, oldest, newest, held)
	}
	again, release := r.acquire("busy", nil, open)
	if again != busy {
		t.Error("a later run of the session got other jobs")
	}
	release()
	releaseBusy()
	r.close()
	if j, _ := r.acquire("late", nil, open); j != nil {
		t.Error("a closed registry handed out jobs")
	}
}
