package session

import (
	"context"
	"fmt"
	"iter"

	"github.com/reinhq/rein/llm"
)

// Store persists sessions: metadata and an append-only log of entries.
//
// Every method is safe for concurrent use. Ids follow [ValidID]; a malformed
// id or a nil session is an error wrapping [ErrInvalid], an unknown id one
// wrapping [ErrNotFound]. Stores that let one process at a time write a
// session report a session held elsewhere with [ErrLocked] (see [Locker]).
// A store shared by several processes checks the fencing token a write's
// context carries ([WithFence], [ErrFenced]; see Fencing in the package
// documentation).
type Store interface {
	// Create stores a new session. An empty ID is filled with [NewID]; zero
	// CreatedAt and UpdatedAt are set to now. s is updated in place. An id
	// in use is [ErrExists].
	Create(ctx context.Context, s *Session) error
	// Get returns a copy of the session's metadata.
	Get(ctx context.Context, id string) (*Session, error)
	// List returns a page of sessions, newest first (UpdatedAt), and the
	// cursor of the next page ("" when there is none).
	List(ctx context.Context, opts ListOptions) ([]*Session, string, error)
	// Update replaces the session's metadata with s, keeping its ID and
	// CreatedAt; a zero UpdatedAt is set to now.
	Update(ctx context.Context, s *Session) error
	// Delete removes the session and its log.
	Delete(ctx context.Context, id string) error
	// Append adds entries to the log, numbering them after the last one
	// (see [PrepareAppend]), and returns the seq of the last. It returns
	// only once the entries are durable. Appending nothing returns the
	// current last seq.
	Append(ctx context.Context, sessionID string, e ...Entry) (lastSeq int64, err error)
	// Entries yields the entries with Seq > afterSeq, in order. A non-nil
	// error is the last value yielded. A store that had to skip a damaged
	// record (a torn last line after a crash) yields in its place a heal
	// entry with Seq 0 describing it, never a fatal error.
	Entries(ctx context.Context, sessionID string, afterSeq int64) iter.Seq2[Entry, error]
	// Fork creates a session holding the entries of id up to atSeq
	// (everything when atSeq <= 0), moved so no tool call is cut from its
	// results (see [ForkEntries]). The new session's ParentID is id and its
	// ForkSeq the seq of the last entry copied; it starts with no usage.
	Fork(ctx context.Context, id string, atSeq int64) (*Session, error)
	// Rewrite atomically replaces the whole log with entries (compaction,
	// clearing). They are numbered after the highest seq the session ever
	// had, so seqs are never reused.
	Rewrite(ctx context.Context, id string, entries []Entry) error
}

// Locker is implemented by stores that let one process at a time write a
// session (session/jsonl). Writes take the lock on their own; Acquire takes
// it up front, so a front end resuming a session learns at once that another
// process has it ([ErrLocked]), before loading and healing it.
type Locker interface {
	// Acquire takes the session's write lock for this process, or returns
	// an error wrapping ErrLocked that names the process holding it.
	Acquire(id string) error
	// Release gives the lock back; releasing a lock not held is a no-op.
	Release(id string) error
}

// ForkEntries returns the prefix of entries (in seq order) that a fork at
// atSeq keeps: those with Seq <= atSeq, or all when atSeq <= 0. When the
// messages kept would end with an assistant message whose tool calls are
// answered later in the log, the prefix is extended to that answer; when
// they are never answered, it is cut before the assistant message. A fork
// thus never needs healing.
func ForkEntries(entries []Entry, atSeq int64) []Entry {
	n := len(entries)
	if atSeq > 0 {
		n = 0
		for n < len(entries) && entries[n].Seq <= atSeq {
			n++
		}
	}
	last := -1 // the newest message-like entry kept
	for i := n - 1; i >= 0; i-- {
		if k := entries[i].Kind; k == KindMessage || k == KindCompaction || (k == KindHeal && entries[i].Heal.History != nil) {
			last = i
			break
		}
	}
	if last < 0 || entries[last].Kind != KindMessage {
		return entries[:n]
	}
	m := entries[last].Message
	if m.Role != llm.RoleAssistant || len(m.ToolUses()) == 0 {
		return entries[:n]
	}
	for i := n; i < len(entries); i++ {
		if entries[i].Kind != KindMessage {
			continue
		}
		if answers(*entries[i].Message, m.ToolUses()) {
			return entries[:i+1]
		}
		break
	}
	return entries[:last]
}

// answers reports whether m is a user message holding a result for one of
// calls.
func answers(m llm.Message, calls []*llm.ToolUse) bool {
	if m.Role != llm.RoleUser {
		return false
	}
	for _, r := range m.ToolResults() {
		for _, c := range calls {
			if r.ToolUseID == c.ID {
				return true
			}
		}
	}
	return false
}

// ContinueLatest returns the most recently updated session of workDir (SPEC
// SESS-3: `rein --continue`), or an error wrapping [ErrNotFound] when it has
// none.
func ContinueLatest(ctx context.Context, store Store, workDir string) (*Session, error) {
	list, _, err := store.List(ctx, ListOptions{WorkDir: workDir, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("no session in %s: %w", workDir, ErrNotFound)
	}
	return list[0], nil
}

// errorf wraps err with the session operation, as stores report errors.
func errorf(id, op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("session %s: %s: %w", id, op, err)
}

// checkSession validates the argument of Create and Update.
func checkSession(s *Session, create bool) error {
	if s == nil {
		return fmt.Errorf("%w: nil session", ErrInvalid)
	}
	if create && s.ID == "" {
		return nil
	}
	return ValidID(s.ID)
}
