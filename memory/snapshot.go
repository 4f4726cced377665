package memory

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// Snapshot is memory as read at one moment: the files of both scopes, in
// the order the prompt shows them (profile, user notes, workspace notes).
type Snapshot struct {
	Files []FileSnapshot `json:"files"`
	// Warnings are what people should know: files that could not be read
	// or were cut, entries left out of the prompt and why.
	Warnings []string `json:"warnings,omitempty"`
}

// FileSnapshot is one memory file as read.
type FileSnapshot struct {
	Scope  Scope  `json:"scope"`
	Target Target `json:"target"`
	Path   string `json:"path"`
	// Exists is false for a file not written yet.
	Exists bool `json:"exists"`
	// Truncated: the file is larger than 64 KiB and only its start was
	// read.
	Truncated bool    `json:"truncated,omitempty"`
	Entries   []Entry `json:"entries"`
	// Chars is what the entries hold, in characters; Cap the file's cap.
	Chars int `json:"chars"`
	Cap   int `json:"cap"`
	// Findings are what the scanner found in the shown entries read
	// together, when no single one has it (an order split across
	// entries): then the whole file is left out of the prompt.
	Findings []Finding `json:"findings,omitempty"`
}

// Entry is one entry of a file as read.
type Entry struct {
	Text string `json:"text"`
	// Findings are what the scanner found in it: an entry with findings is
	// left out of the prompt.
	Findings []Finding `json:"findings,omitempty"`
	// OverCap: the entries before it fill the cap, so it is left out of
	// the prompt.
	OverCap bool `json:"over_cap,omitempty"`
}

// Shown reports whether the entry goes into the prompt.
func (e Entry) Shown() bool { return len(e.Findings) == 0 && !e.OverCap }

// Fill is the file's fill: "notes (workspace): 5 entries, 1,020 / 3,000
// characters".
func (f FileSnapshot) Fill() string { return fill(f.Target, f.Scope, len(f.Entries), f.Chars, f.Cap) }

// Snapshot reads both scopes. It never fails: what cannot be read is
// left out and said in Warnings. Each entry is scanned; those that fail,
// and those beyond the cap, are marked and warned about.
func (s *Store) Snapshot() Snapshot {
	var snap Snapshot
	for _, st := range []struct {
		scope Scope
		t     Target
	}{{ScopeUser, TargetProfile}, {ScopeUser, TargetNotes}, {ScopeWorkspace, TargetNotes}} {
		if (st.scope == ScopeUser && s.cfg.UserDir == "") || (st.scope == ScopeWorkspace && s.cfg.WorkspaceDir == "") {
			continue
		}
		f, warn := s.readSnapshot(st.scope, st.t)
		snap.Warnings = append(snap.Warnings, warn...)
		if f.Path != "" {
			snap.Files = append(snap.Files, f)
		}
	}
	return snap
}

// readSnapshot reads one file of the snapshot.
func (s *Store) readSnapshot(scope Scope, t Target) (FileSnapshot, []string) {
	dir, name, err := s.locate(scope, t)
	if err != nil {
		return FileSnapshot{}, []string{fmt.Sprintf("memory: %v: not read", err)}
	}
	f := FileSnapshot{Scope: scope, Target: t, Path: filepath.Join(dir, name), Cap: s.Cap(t)}
	text, exists, truncated, err := readFile(dir, name)
	if err != nil {
		return f, []string{fmt.Sprintf("memory: %s: %v", f.Path, err)}
	}
	f.Exists, f.Truncated = exists, truncated
	var warns []string
	if truncated {
		warns = append(warns, fmt.Sprintf("memory: %s is larger than %d KiB: only its start is read; condense it (rein memory edit)", f.Path, maxFileBytes>>10))
	}
	shown := 0
	var over []int
	for i, e := range Parse(text).Entries {
		en := Entry{Text: e}
		n := utf8.RuneCountInString(e)
		f.Chars += n
		if f.Chars <= scanChars*f.Cap {
			en.Findings = scanRemembered(e, false) // far past the cap nothing is shown: no need to scan
		}
		switch {
		case len(en.Findings) > 0:
			warns = append(warns, fmt.Sprintf("memory: %s entry %d withheld from the prompt (rule %s): %s; edit or remove it (rein memory edit)",
				f.Path, i+1, Rules(en.Findings), Explain(en.Findings)))
		case shown+n > f.Cap:
			en.OverCap = true
			over = append(over, i+1)
		default:
			shown += n
		}
		f.Entries = append(f.Entries, en)
	}
	if fs := scanTogether(f.Entries); len(fs) > 0 {
		f.Findings = fs
		warns = append(warns, fmt.Sprintf("memory: %s withheld from the prompt (rule %s): its entries read together say what none says alone: %s; edit it (rein memory edit)",
			f.Path, Rules(fs), Explain(fs)))
	}
	if len(over) > 0 {
		which := "entry " + numberRanges(over) + " is"
		if len(over) > 1 {
			which = "entries " + numberRanges(over) + " are"
		}
		warns = append(warns, fmt.Sprintf("memory: %s holds %s / %s characters: %s left out of the prompt; condense it (rein memory edit)",
			f.Path, thousands(f.Chars), thousands(f.Cap), which))
	}
	return f, warns
}

// scanTogether scans the entries a file shows, joined as the prompt shows
// them.
func scanTogether(entries []Entry) []Finding {
	var shown []string
	for _, e := range entries {
		if e.Shown() {
			shown = append(shown, e.Text)
		}
	}
	if len(shown) < 2 {
		return nil
	}
	return scanRemembered(strings.Join(shown, "\n"), false)
}

// scanChars bounds the scanning of a file edited past its cap: entries
// beyond scanChars times the cap are left out unscanned.
const scanChars = 4

// numberRanges writes ascending numbers compactly: "2, 4–7".
func numberRanges(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d–%d", ns[i], ns[j]))
		} else {
			parts = append(parts, fmt.Sprint(ns[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// Reindex rewrites the index of a scope, after its files were edited by
// hand (rein memory edit).
func (s *Store) Reindex(ctx context.Context, scope Scope) error {
	t := TargetNotes
	dir, _, err := s.locate(scope, t)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); err != nil {
		return nil // nothing to index
	}
	unlock, err := lockDir(ctx, dir)
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	defer unlock()
	return s.writeIndex(scope, dir)
}

// writeIndex writes MEMORY.md of a scope's directory: each file with what
// it holds and its fill. The caller holds the directory's lock.
func (s *Store) writeIndex(scope Scope, dir string) error {
	var b strings.Builder
	b.WriteString("# Memory index\n\n")
	b.WriteString("rein keeps the files below across sessions and shows them to the model at the start of every run.\n")
	b.WriteString("Edit them freely or with `rein memory`; rein rewrites this index on every change and never reads it.\n\n")
	targets := []Target{TargetProfile, TargetNotes}
	if scope == ScopeWorkspace {
		targets = targets[1:]
	}
	for _, t := range targets {
		name, what := NotesFile, "fact notes (decisions, conventions, milestones)"
		if t == TargetProfile {
			name, what = ProfileFile, "user profile (who the user is, preferences, style, stack)"
		}
		text, exists, _, err := readFile(dir, name)
		if err != nil {
			fmt.Fprintf(&b, "- [%s](%s) — %s: cannot be read: %v\n", name, name, what, err)
			continue
		}
		if !exists {
			fmt.Fprintf(&b, "- %s — %s: not written yet\n", name, what)
			continue
		}
		entries := Parse(text).Entries
		fmt.Fprintf(&b, "- [%s](%s) — %s: %d entries, %s / %s characters\n",
			name, name, what, len(entries), thousands(entryChars(entries)), thousands(s.Cap(t)))
	}
	now := time.Now
	if s.cfg.Now != nil {
		now = s.cfg.Now
	}
	fmt.Fprintf(&b, "\nUpdated %s.\n", now().UTC().Format("2006-01-02 15:04 UTC"))
	return writeFile(dir, IndexFile, []byte(b.String()))
}
