package agent

import (
	"slices"

	"github.com/reinhq/rein/llm"
)

// Focus is the task state carried across turns and runs (SPEC LOOP-11): what
// the user is after, what was read, what was changed, what was verified. It is
// kept in the session (the done event carries it), given to the compactor so
// a summary keeps it, and handed to sub-agents.
type Focus struct {
	// Goal is the newest user request; RecentGoals the ones before it,
	// newest first (at most 5).
	Goal        string   `json:"goal,omitempty"`
	RecentGoals []string `json:"recent_goals,omitempty"`
	// FilesRead lists files read, newest last (at most 50; one entry a path).
	FilesRead []FileRead `json:"files_read,omitempty"`
	// FilesChanged lists files written or edited, in first-change order.
	FilesChanged []string `json:"files_changed,omitempty"`
	// Verified lists checks that passed (test, build and lint commands that
	// exited 0, e.g. "go test ./..."), newest last (at most 20; a check run
	// again moves to the end).
	Verified []string `json:"verified,omitempty"`
	// Plan is the newest plan presented with exit_plan_mode (PERM-7),
	// approved or not: compaction keeps it verbatim.
	Plan string `json:"plan,omitempty"`
}

// FileRead is one file the agent read.
type FileRead struct {
	Path string `json:"path"`
	// Start and End are the 1-based lines read; 0 when unknown.
	Start   int    `json:"start,omitempty"`
	End     int    `json:"end,omitempty"`
	Preview string `json:"preview,omitempty"`
}

const (
	maxRecentGoals = 5
	maxFilesRead   = 50
	maxVerified    = 20
	maxGoalChars   = 500
)

// setGoal records a new user request.
func (f *Focus) setGoal(m llm.Message) {
	text := m.TextOf()
	if text == "" {
		return
	}
	if len(text) > maxGoalChars {
		text = text[:maxGoalChars] + "…"
	}
	if f.Goal != "" {
		f.RecentGoals = append([]string{f.Goal}, f.RecentGoals...)
		if len(f.RecentGoals) > maxRecentGoals {
			f.RecentGoals = f.RecentGoals[:maxRecentGoals]
		}
	}
	f.Goal = text
}

// observe updates the focus from a finished tool call's metadata. Tools
// report what they touched with the metadata keys "path" (with "start_line",
// "end_line", "preview") for reads, "changed" (a path) for writes, and
// "verified" (the command) for a check that passed — the bash tool sets it
// for test, build and lint runs that exit 0 (builtin.MetaVerified).
func (f *Focus) observe(name string, md map[string]any, isError bool) {
	if md == nil || isError {
		return
	}
	if p, ok := md["changed"].(string); ok && p != "" {
		for _, c := range f.FilesChanged {
			if c == p {
				return
			}
		}
		f.FilesChanged = append(f.FilesChanged, p)
		return
	}
	if cmd, ok := md["verified"].(string); ok && cmd != "" {
		f.Verified = appendCapped(slices.DeleteFunc(f.Verified, func(v string) bool { return v == cmd }), cmd, maxVerified)
		return
	}
	if p, ok := md["path"].(string); ok && p != "" && name == "read_file" {
		fr := FileRead{Path: p, Start: intOf(md["start_line"]), End: intOf(md["end_line"])}
		fr.Preview, _ = md["preview"].(string)
		for i, r := range f.FilesRead {
			if r.Path == p {
				f.FilesRead = append(f.FilesRead[:i], f.FilesRead[i+1:]...)
				break
			}
		}
		f.FilesRead = append(f.FilesRead, fr)
		if len(f.FilesRead) > maxFilesRead {
			f.FilesRead = f.FilesRead[len(f.FilesRead)-maxFilesRead:]
		}
	}
}

func appendCapped(s []string, v string, n int) []string {
	s = append(s, v)
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}

func intOf(v any) int {
	switch v := v.(type) {
	case int:
		return v
	case int64:
		return int(v)
	case float64:
		return int(v)
	}
	return 0
}
