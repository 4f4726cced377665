package session

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/reinhq/rein/llm"
)

// The conditions callers test with errors.Is. Stores wrap them with the
// operation and the session id.
var (
	// ErrNotFound: no session has this id.
	ErrNotFound = errors.New("session not found")
	// ErrLocked: another process has the session open for writing. The
	// wrapping error names that process.
	ErrLocked = errors.New("session locked by another process")
	// ErrExists: Create was given the id of an existing session.
	ErrExists = errors.New("session already exists")
	// ErrInvalid: the input is malformed (an empty or unsafe id, a nil
	// session, an entry whose payload does not match its kind, a bad cursor).
	ErrInvalid = errors.New("invalid session input")
	// ErrUnavailable: the store cannot be reached (its database is down
	// or the network to it is); the same call may succeed later. The
	// wrapping error names the store and the cause.
	ErrUnavailable = errors.New("session store unreachable")
	// ErrUnreadable: not one record of the session's log can be read.
	// The store keeps the log as it is — it never writes over what it
	// cannot read — and the wrapping error names the file.
	ErrUnreadable = errors.New("no record of the session's log can be read")
)

// Session is a conversation's metadata. Its log of entries is kept apart, in
// the [Store].
type Session struct {
	// ID identifies the session; see [ValidID]. Create assigns one when empty.
	ID string `json:"id"`
	// WorkDir is the workspace directory the session works in (absolute).
	WorkDir string `json:"work_dir,omitempty"`
	// Caller owns the session on a server (SPEC API-4); empty for the CLI.
	Caller string `json:"caller,omitempty"`
	// Workspace is the id of the server workspace it belongs to (see
	// [Workspace]); empty for the CLI.
	Workspace string `json:"workspace,omitempty"`
	// Title is a name given by the user or the front end; may be empty.
	Title string `json:"title,omitempty"`
	// Preview is the first user message's text, cut to about 100 characters
	// ([PreviewOf]); listings show it.
	Preview   string    `json:"preview,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt orders listings, newest first. Create and Update set it;
	// appending entries does not.
	UpdatedAt time.Time `json:"updated_at"`
	// ParentID and ForkSeq are set on a fork: the session it was forked from
	// and the sequence number of the last entry it copied.
	ParentID string `json:"parent_id,omitempty"`
	ForkSeq  int64  `json:"fork_seq,omitempty"`
	// Model is the model of the newest run ("anthropic/claude-sonnet-4-5").
	Model string `json:"model,omitempty"`
	// Usage and CostUSD add up every run of the session (SPEC SESS-4); Runs
	// counts them.
	Usage   llm.Usage `json:"usage"`
	CostUSD float64   `json:"cost_usd,omitempty"`
	Runs    int       `json:"runs,omitempty"`
	// PermissionMode is the session's own permission mode on a server
	// (SPEC PERM-7: "plan" keeps every run in plan mode until a plan is
	// approved): every run of the session uses it unless its message names
	// one; empty keeps the configuration's. Kept in the metadata's JSON, so
	// a session stored before it existed reads as empty.
	PermissionMode string `json:"permission_mode,omitempty"`
}

// ListOptions selects sessions for [Store.List].
type ListOptions struct {
	// WorkDir keeps only sessions of this directory (compared exactly);
	// empty keeps all.
	WorkDir string
	// Caller and Workspace, when set, keep only sessions of that caller
	// and workspace (compared exactly).
	Caller, Workspace string
	// Limit caps the page; 0 or less means [DefaultListLimit].
	Limit int
	// Cursor continues a listing where the previous page ended: the cursor
	// List returned with it. Empty starts at the newest session.
	Cursor string
}

// DefaultListLimit is the page size of a listing that sets no limit.
const DefaultListLimit = 100

// maxIDLen bounds a session id, so it is a safe file name everywhere.
const maxIDLen = 128

// ValidID reports whether id may name a session: 1 to 128 characters among
// ASCII letters, digits, '-', '_' and '.', not starting with '.'. Every store
// accepts exactly these ids, so an id can be a file name.
func ValidID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty session id", ErrInvalid)
	}
	if len(id) > maxIDLen || id[0] == '.' {
		return fmt.Errorf("%w: session id %q: want 1 to %d of [A-Za-z0-9._-], not starting with '.'", ErrInvalid, id, maxIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("%w: session id %q: character %q not allowed (want [A-Za-z0-9._-])", ErrInvalid, id, c)
		}
	}
	return nil
}

// NewID returns a new session id: the creation time in milliseconds (12 hex
// digits, so ids sort by age) and 8 random hex digits.
func NewID() string {
	var r [4]byte
	_, _ = rand.Read(r[:]) // never fails (crypto/rand)
	return fmt.Sprintf("%012x%s", time.Now().UnixMilli(), hex.EncodeToString(r[:]))
}

// PreviewLen is how many characters [PreviewOf] keeps.
const PreviewLen = 100

// PreviewOf returns text as a one-line preview: runs of white space become one
// space, and text longer than [PreviewLen] characters is cut with "…".
func PreviewOf(text string) string {
	var b strings.Builder
	n := 0
	space := false
	for _, r := range text {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space && n+1 >= PreviewLen || n >= PreviewLen {
			b.WriteString("…")
			return b.String()
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// Page applies opts to sessions (in any order): keeps those of opts.WorkDir,
// sorts newest first (UpdatedAt, then ID, descending), starts after
// opts.Cursor and cuts to opts.Limit. It returns the page and the cursor of
// the next one, empty when there is none. Stores that list by scanning use
// it, so all of them page alike.
func Page(sessions []*Session, opts ListOptions) ([]*Session, string, error) {
	var after *cursor
	if opts.Cursor != "" {
		c, err := decodeCursor(opts.Cursor)
		if err != nil {
			return nil, "", err
		}
		after = &c
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultListLimit
	}
	var keep []*Session
	for _, s := range sessions {
		if opts.WorkDir != "" && s.WorkDir != opts.WorkDir || opts.Caller != "" && s.Caller != opts.Caller ||
			opts.Workspace != "" && s.Workspace != opts.Workspace {
			continue
		}
		if after != nil && !after.before(s) {
			continue
		}
		keep = append(keep, s)
	}
	slices.SortFunc(keep, func(a, b *Session) int { return -compareSessions(a, b) })
	if len(keep) <= limit {
		return keep, "", nil
	}
	keep = keep[:limit]
	return keep, encodeCursor(keep[limit-1]), nil
}

// compareSessions orders sessions oldest first: by UpdatedAt, then by ID.
func compareSessions(a, b *Session) int {
	if c := a.UpdatedAt.Compare(b.UpdatedAt); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// cursor is the position of the last session of a page.
type cursor struct {
	updated time.Time
	id      string
}

// before reports whether s comes after the cursor in a newest-first listing.
func (c cursor) before(s *Session) bool {
	return compareSessions(s, &Session{UpdatedAt: c.updated, ID: c.id}) < 0
}

func encodeCursor(s *Session) string { return EncodeCursor(s.UpdatedAt.UnixNano(), s.ID) }

func decodeCursor(text string) (cursor, error) {
	n, id, err := DecodeCursor(text)
	return cursor{updated: time.Unix(0, n), id: id}, err
}

// EncodeCursor is the text of a listing's position after the session with
// UpdatedAt updatedNano (Unix nanoseconds) and id: the cursor every store's
// List returns, so one store's cursor means the same to another.
func EncodeCursor(updatedNano int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(updatedNano, 10) + ":" + id))
}

// DecodeCursor reads what [EncodeCursor] wrote; anything else is an error
// wrapping [ErrInvalid].
func DecodeCursor(text string) (updatedNano int64, id string, err error) {
	bad := fmt.Errorf("%w: list cursor %q was not returned by List", ErrInvalid, text)
	raw, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil || !utf8.Valid(raw) {
		return 0, "", bad
	}
	ns, id, ok := strings.Cut(string(raw), ":")
	if !ok {
		return 0, "", bad
	}
	n, err := strconv.ParseInt(ns, 10, 64)
	if err != nil {
		return 0, "", bad
	}
	return n, id, nil
}

// ProcessStart identifies a live process beyond its pid: its start time in
// clock ticks since boot on Linux, 0 where unknown. Recording it with a pgid
// keeps a later pid reuse from being taken for the same process.
func ProcessStart(pid int) uint64 { return processStart(pid) }

// LockError is the ErrLocked a store returns when it knows who holds the
// session: errors.Is(err, ErrLocked) holds, and errors.As gives the holder.
type LockError struct {
	SessionID string
	// Holder names the process holding the lock ("12345"), "" when unknown.
	Holder string
	// Lock is the lock file or key, for the message.
	Lock string
}

func (e *LockError) Error() string {
	holder := e.Holder
	if holder == "" {
		holder = "?"
	}
	return fmt.Sprintf("session %s: %v: it is open for writing in process %s (lock %s); close that session or wait for it to finish",
		e.SessionID, ErrLocked, holder, e.Lock)
}

// Unwrap makes errors.Is(err, ErrLocked) hold.
func (e *LockError) Unwrap() error { return ErrLocked }
