package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Scope is where a memory file lives: the user's (every workspace) or the
// workspace's.
type Scope string

// The scopes.
const (
	ScopeUser      Scope = "user"
	ScopeWorkspace Scope = "workspace"
)

// Target is which memory file: the profile or the notes.
type Target string

// The targets.
const (
	// TargetProfile is the user profile (USER.md): who the user is,
	// preferences, style, stack. User scope only.
	TargetProfile Target = "profile"
	// TargetNotes are the fact notes (NOTES.md): decisions, conventions,
	// milestones.
	TargetNotes Target = "notes"
)

// The files of a memory directory.
const (
	ProfileFile = "USER.md"
	NotesFile   = "NOTES.md"
	IndexFile   = "MEMORY.md"
)

// The default caps, in characters.
const (
	DefaultProfileCap = 2000
	DefaultNotesCap   = 3000
)

// UserDir is the user's memory directory under rein's configuration
// directory (workspace.Paths.ConfigDir).
func UserDir(configDir string) string {
	if configDir == "" {
		return ""
	}
	return filepath.Join(configDir, "memory")
}

// WorkspaceDir is the memory directory of the workspace at root.
func WorkspaceDir(root string) string {
	if root == "" {
		return ""
	}
	return filepath.Join(root, ".rein", "memory")
}

// Config says where memory lives and how much it may hold. The zero value
// has no directories (nothing is read, writes fail with a clear error)
// and the default caps.
type Config struct {
	// UserDir is the user's memory directory ([UserDir]); "" for none.
	UserDir string
	// WorkspaceDir is the workspace's ([WorkspaceDir]): <root>/.rein/memory.
	// "" when there is no workspace (a chat workspace without a root).
	// It must not lead out of <root> through a symbolic link.
	WorkspaceDir string
	// ProfileCap and NotesCap are the hard caps in characters (runes) of
	// the profile and of each scope's notes; 0 means the defaults.
	ProfileCap, NotesCap int
	// Now is the clock of the index's "updated" line; nil means time.Now.
	Now func() time.Time
}

// Store reads and changes memory files. It is safe for concurrent use, by
// goroutines and processes: every change is a read-modify-write under the
// directory's lock file.
type Store struct {
	cfg Config
}

// New returns a store over cfg.
func New(cfg Config) *Store { return &Store{cfg: cfg} }

// Cap returns the cap of target in characters.
func (s *Store) Cap(t Target) int {
	if t == TargetProfile {
		return cmpOr(s.cfg.ProfileCap, DefaultProfileCap)
	}
	return cmpOr(s.cfg.NotesCap, DefaultNotesCap)
}

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// HasWorkspace reports whether the store has a workspace scope.
func (s *Store) HasWorkspace() bool { return s.cfg.WorkspaceDir != "" }

// DefaultScope is where target goes when no scope is named: the profile
// to the user, notes to the workspace when there is one.
func (s *Store) DefaultScope(t Target) Scope {
	if t == TargetNotes && s.HasWorkspace() {
		return ScopeWorkspace
	}
	return ScopeUser
}

// The errors of changes; each comes wrapped in a message for the model.
var (
	// ErrRefused: the scanner found something ([RefusedError] says what).
	ErrRefused = errors.New("refused by the memory scanner")
	// ErrTooLong: the change would take the file over its cap.
	ErrTooLong = errors.New("over the memory cap")
	// ErrNoMatch: no entry contains the text to replace or remove.
	ErrNoMatch = errors.New("no entry matches")
	// ErrAmbiguous: several entries contain it.
	ErrAmbiguous = errors.New("several entries match")
	// ErrNoScope: the scope or target named does not exist here.
	ErrNoScope = errors.New("no such memory")
)

// RefusedError is a write the scanner refused.
type RefusedError struct {
	Findings []Finding
	// Neighbour, when not 0, is the entry (counted from 1) that the new
	// text was refused together with: alone, neither is.
	Neighbour int
}

// Error says what the scanner found, why memory refuses it, and that
// nothing was written.
func (e *RefusedError) Error() string {
	together := ""
	if e.Neighbour > 0 {
		together = fmt.Sprintf(" (read together with entry %d, which it would stand next to)", e.Neighbour)
	}
	return "refused — " + Explain(e.Findings) + together + ". Memory is shown to the model in every later session, so it must not hold " +
		"instructions to the model, secrets or hidden text; write the note as a plain fact or preference. Nothing was written"
}

// Is makes errors.Is(err, ErrRefused) hold.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// locate returns the directory, file name and cap of a scope's target.
func (s *Store) locate(scope Scope, t Target) (dir, name string, err error) {
	switch t {
	case TargetProfile:
		name = ProfileFile
		if scope == ScopeWorkspace {
			return "", "", fmt.Errorf("%w: the profile is kept at user level only; use scope user", ErrNoScope)
		}
	case TargetNotes:
		name = NotesFile
	default:
		return "", "", fmt.Errorf("%w: target %q: use profile or notes", ErrNoScope, t)
	}
	switch scope {
	case ScopeUser:
		dir = s.cfg.UserDir
		if dir == "" {
			return "", "", fmt.Errorf("%w: no user memory directory is configured", ErrNoScope)
		}
	case ScopeWorkspace:
		dir = s.cfg.WorkspaceDir
		if dir == "" {
			return "", "", fmt.Errorf("%w: there is no workspace here, so no workspace memory; use scope user", ErrNoScope)
		}
		if err := confined(dir, filepath.Dir(filepath.Dir(dir))); err != nil {
			return "", "", err
		}
	default:
		return "", "", fmt.Errorf("%w: scope %q: use user or workspace", ErrNoScope, scope)
	}
	return dir, name, nil
}

// Path returns the file of a scope's target.
func (s *Store) Path(scope Scope, t Target) (string, error) {
	dir, name, err := s.locate(scope, t)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// Action is what a change did.
type Action string

// The actions.
const (
	Added     Action = "added"
	Replaced  Action = "replaced"
	Removed   Action = "removed"
	Unchanged Action = "unchanged"
)

// Change is the outcome of a write.
type Change struct {
	Action Action `json:"action"`
	Scope  Scope  `json:"scope"`
	Target Target `json:"target"`
	Path   string `json:"path"`
	// Entry is the entry added, the new text of a replaced one, or the
	// entry removed; Old is a replaced entry's previous text.
	Entry string `json:"entry,omitempty"`
	Old   string `json:"old,omitempty"`
	// Note says why nothing changed, or what else happened.
	Note string `json:"note,omitempty"`
	// Entries, Chars and Cap are the file's fill after the change.
	Entries int `json:"entries"`
	Chars   int `json:"chars"`
	Cap     int `json:"cap"`
}

// Fill is the file's fill: "notes (workspace): 5 entries, 1,020 / 3,000
// characters".
func (c Change) Fill() string { return fill(c.Target, c.Scope, c.Entries, c.Chars, c.Cap) }

// String says what changed and the new fill.
func (c Change) String() string {
	var s string
	switch c.Action {
	case Added:
		s = "Added to " + string(c.Target)
	case Replaced:
		s = "Replaced an entry of " + string(c.Target)
	case Removed:
		s = "Removed an entry of " + string(c.Target)
	default:
		s = "Nothing changed in " + string(c.Target)
	}
	if c.Note != "" {
		s += " (" + c.Note + ")"
	}
	return s + ". Now " + c.Fill() + "."
}

func fill(t Target, scope Scope, entries, chars, limit int) string {
	unit := "entries"
	if entries == 1 {
		unit = "entry"
	}
	return fmt.Sprintf("%s (%s): %d %s, %s / %s characters", t, scope, entries, unit, thousands(chars), thousands(limit))
}

// thousands formats n with commas: 12,345.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// maxInput bounds the text of one write, before anything else is done.
const maxInput = 16 << 10

// Add adds text as a new entry of a scope's target. The text is scanned
// first and refused with the reason ([RefusedError]); white space is
// normalised; an entry equal to an existing one (case and white space
// ignored) changes nothing (Action Unchanged); a file that would go over
// its cap is refused ([ErrTooLong]) with nothing written.
func (s *Store) Add(ctx context.Context, scope Scope, t Target, text string) (Change, error) {
	entry, err := prepare(text)
	if err != nil {
		return Change{}, err
	}
	return s.update(ctx, scope, t, func(f *File) (Change, error) {
		for i, e := range f.Entries {
			if dedupKey(e) == dedupKey(entry) {
				return Change{Action: Unchanged, Entry: e, Note: fmt.Sprintf("already kept as entry %d", i+1)}, nil
			}
		}
		if err := checkNeighbours(f.Entries, len(f.Entries), entry); err != nil {
			return Change{}, err
		}
		f.Entries = append(f.Entries, entry)
		return Change{Action: Added, Entry: entry}, nil
	})
}

// Replace replaces the one entry that contains old with text; old must
// match exactly one entry ([ErrNoMatch], [ErrAmbiguous] otherwise). The
// new text goes through the checks of [Store.Add]; when it equals another
// entry, the matched one is removed instead.
func (s *Store) Replace(ctx context.Context, scope Scope, t Target, old, text string) (Change, error) {
	entry, err := prepare(text)
	if err != nil {
		return Change{}, err
	}
	return s.update(ctx, scope, t, func(f *File) (Change, error) {
		i, err := match(f.Entries, old, t, scope)
		if err != nil {
			return Change{}, err
		}
		prev := f.Entries[i]
		if dedupKey(prev) == dedupKey(entry) {
			return Change{Action: Unchanged, Entry: prev, Note: "the new text is the same as the entry"}, nil
		}
		for j, e := range f.Entries {
			if j != i && dedupKey(e) == dedupKey(entry) {
				f.Entries = append(f.Entries[:i], f.Entries[i+1:]...)
				return Change{Action: Removed, Entry: prev, Note: fmt.Sprintf("the new text is already entry %d, so the old entry was removed", j+1)}, nil
			}
		}
		if err := checkNeighbours(f.Entries, i, entry); err != nil {
			return Change{}, err
		}
		f.Entries[i] = entry
		return Change{Action: Replaced, Entry: entry, Old: prev}, nil
	})
}

// Remove removes the one entry that contains old.
func (s *Store) Remove(ctx context.Context, scope Scope, t Target, old string) (Change, error) {
	return s.update(ctx, scope, t, func(f *File) (Change, error) {
		i, err := match(f.Entries, old, t, scope)
		if err != nil {
			return Change{}, err
		}
		prev := f.Entries[i]
		f.Entries = append(f.Entries[:i], f.Entries[i+1:]...)
		return Change{Action: Removed, Entry: prev}, nil
	})
}

// prepare normalises and scans the text of a write.
func prepare(text string) (string, error) {
	if len(text) > maxInput {
		return "", fmt.Errorf("%w: the text is %s bytes; a memory entry is a sentence or two — condense it. Nothing was written",
			ErrTooLong, thousands(len(text)))
	}
	entry := normalise(text)
	if entry == "" {
		return "", errors.New("the text is empty: say what to remember")
	}
	if fs := Scan(entry); len(fs) > 0 {
		return "", &RefusedError{Findings: fs}
	}
	return entry, nil
}

// checkNeighbours refuses an entry that would go at index at (replacing
// the entry there, or appended when at is len(entries)) when, read
// together with the entry before or after it, it says what neither says
// alone: an order split across two entries.
func checkNeighbours(entries []string, at int, entry string) error {
	if at > 0 && entries[at-1] != "" {
		if fs := Scan(entries[at-1] + "\n" + entry); len(fs) > 0 && len(Scan(entries[at-1])) == 0 {
			return &RefusedError{Findings: fs, Neighbour: at}
		}
	}
	if at+1 < len(entries) {
		if fs := Scan(entry + "\n" + entries[at+1]); len(fs) > 0 && len(Scan(entries[at+1])) == 0 {
			return &RefusedError{Findings: fs, Neighbour: at + 2}
		}
	}
	return nil
}

// update runs one read-modify-write of a scope's target under the
// directory's lock: fn changes the parsed file and says what it did.
func (s *Store) update(ctx context.Context, scope Scope, t Target, fn func(*File) (Change, error)) (Change, error) {
	dir, name, err := s.locate(scope, t)
	if err != nil {
		return Change{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Change{}, fmt.Errorf("memory: %w", err)
	}
	unlock, err := lockDir(ctx, dir)
	if err != nil {
		return Change{}, fmt.Errorf("memory: %w", err)
	}
	defer unlock()
	path := filepath.Join(dir, name)
	text, exists, truncated, err := readFile(dir, name)
	switch {
	case err != nil:
		return Change{}, fmt.Errorf("memory: %s: %w", path, err)
	case truncated:
		return Change{}, fmt.Errorf("%w: %s is larger than %d KiB, more than rein edits; condense it by hand (rein memory edit). Nothing was written",
			ErrTooLong, path, maxFileBytes>>10)
	}
	f := Parse(text)
	if !exists && f.Header == "" {
		f.Header = defaultHeader(t)
	}
	before := entryChars(f.Entries)
	ch, err := fn(&f)
	if err != nil {
		return Change{}, err
	}
	ch.Scope, ch.Target, ch.Path, ch.Cap = scope, t, path, s.Cap(t)
	ch.Entries, ch.Chars = len(f.Entries), entryChars(f.Entries)
	if ch.Action == Unchanged {
		return ch, nil
	}
	if ch.Chars > ch.Cap && ch.Chars > before {
		return Change{}, fmt.Errorf("%w: %s would be %s / %s characters; condense or remove entries first — nothing was written",
			ErrTooLong, t, thousands(ch.Chars), thousands(ch.Cap))
	}
	if err := writeFile(dir, name, []byte(f.Render())); err != nil {
		return Change{}, fmt.Errorf("memory: write %s: %w", path, err)
	}
	if err := s.writeIndex(scope, dir); err != nil {
		return ch, fmt.Errorf("memory: %s changed, but its index did not: %w", path, err)
	}
	return ch, nil
}

// Ensure creates a scope's target file, with only its heading, when it
// does not exist yet (for a person to edit), and returns its path.
func (s *Store) Ensure(ctx context.Context, scope Scope, t Target) (string, error) {
	dir, name, err := s.locate(scope, t)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("memory: %w", err)
	}
	unlock, err := lockDir(ctx, dir)
	if err != nil {
		return "", fmt.Errorf("memory: %w", err)
	}
	defer unlock()
	_, exists, _, err := readFile(dir, name)
	switch {
	case err != nil:
		return "", fmt.Errorf("memory: %s: %w", path, err)
	case exists:
		return path, nil
	}
	if err := writeFile(dir, name, []byte(File{Header: defaultHeader(t)}.Render())); err != nil {
		return "", fmt.Errorf("memory: write %s: %w", path, err)
	}
	return path, s.writeIndex(scope, dir)
}

// defaultHeader heads a new file.
func defaultHeader(t Target) string {
	if t == TargetProfile {
		return "# User profile"
	}
	return "# Notes"
}

// match returns the index of the one entry containing old: exactly, or
// else with case and white space ignored. An entry equal to old wins over
// entries that merely contain it.
func match(entries []string, old string, t Target, scope Scope) (int, error) {
	old = strings.TrimSpace(old)
	if old == "" {
		return 0, fmt.Errorf("%w: old_text is empty; quote part of the entry to change", ErrNoMatch)
	}
	key := dedupKey(old)
	var exact, subs []int
	for i, e := range entries {
		if dedupKey(e) == key {
			exact = append(exact, i)
		}
		if strings.Contains(e, old) {
			subs = append(subs, i)
		}
	}
	if len(exact) == 1 {
		return exact[0], nil
	}
	if len(subs) == 0 {
		for i, e := range entries {
			if strings.Contains(dedupKey(e), key) {
				subs = append(subs, i)
			}
		}
	}
	switch len(subs) {
	case 1:
		return subs[0], nil
	case 0:
		if len(entries) == 0 {
			return 0, fmt.Errorf("%w: %s (%s) is empty", ErrNoMatch, t, scope)
		}
		return 0, fmt.Errorf("%w: no entry of %s (%s) contains %s; the entries are: %s",
			ErrNoMatch, t, scope, quote(clip(old, 60)), listEntries(entries, nil))
	}
	return 0, fmt.Errorf("%w: %s is in %d entries of %s (%s): %s; quote more of the one you mean so that only it matches",
		ErrAmbiguous, quote(clip(old, 60)), len(subs), t, scope, listEntries(entries, subs))
}

// listEntries lists entries (those of idx, or all) numbered and clipped,
// at most ten.
func listEntries(entries []string, idx []int) string {
	if idx == nil {
		for i := range entries {
			idx = append(idx, i)
		}
	}
	var parts []string
	for n, i := range idx {
		if n == 10 {
			parts = append(parts, fmt.Sprintf("and %d more", len(idx)-10))
			break
		}
		parts = append(parts, fmt.Sprintf("%d: %s", i+1, quote(clip(strings.Join(strings.Fields(entries[i]), " "), 60))))
	}
	return strings.Join(parts, ", ")
}
