package session

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"sync"
	"time"
)

// MemStore is a [Store] kept in memory, for tests and ephemeral sessions.
// Entries are stored as their JSON encoding, so what it returns is a copy
// that went through the same encoding as a file or database store's.
type MemStore struct {
	mu       sync.Mutex
	sessions map[string]*memSession
	now      func() time.Time
}

type memSession struct {
	meta    Session
	entries [][]byte // JSON, in seq order
	lastSeq int64    // highest seq ever assigned
}

// NewMemStore returns an empty in-memory store.
func NewMemStore() *MemStore {
	return &MemStore{sessions: map[string]*memSession{}, now: time.Now}
}

var _ Store = (*MemStore)(nil)

// Create implements [Store].
func (m *MemStore) Create(_ context.Context, s *Session) error {
	if err := checkSession(s, true); err != nil {
		return fmt.Errorf("session: create: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.ID == "" {
		s.ID = NewID()
	}
	if _, ok := m.sessions[s.ID]; ok {
		return errorf(s.ID, "create", ErrExists)
	}
	now := m.now()
	if s.CreatedAt.IsZero() {
		s.CreatedAt = now
	}
	if s.UpdatedAt.IsZero() {
		s.UpdatedAt = s.CreatedAt
	}
	m.sessions[s.ID] = &memSession{meta: *s}
	return nil
}

// session returns the session id; m.mu must be held.
func (m *MemStore) session(id, op string) (*memSession, error) {
	if err := ValidID(id); err != nil {
		return nil, fmt.Errorf("session: %s: %w", op, err)
	}
	s, ok := m.sessions[id]
	if !ok {
		return nil, errorf(id, op, ErrNotFound)
	}
	return s, nil
}

// Get implements [Store].
func (m *MemStore) Get(_ context.Context, id string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.session(id, "get")
	if err != nil {
		return nil, err
	}
	c := s.meta
	return &c, nil
}

// List implements [Store].
func (m *MemStore) List(_ context.Context, opts ListOptions) ([]*Session, string, error) {
	m.mu.Lock()
	all := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		c := s.meta
		all = append(all, &c)
	}
	m.mu.Unlock()
	page, next, err := Page(all, opts)
	if err != nil {
		return nil, "", fmt.Errorf("session: list: %w", err)
	}
	return page, next, nil
}

// Update implements [Store].
func (m *MemStore) Update(_ context.Context, s *Session) error {
	if err := checkSession(s, false); err != nil {
		return fmt.Errorf("session: update: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, err := m.session(s.ID, "update")
	if err != nil {
		return err
	}
	c := *s
	c.CreatedAt = ms.meta.CreatedAt
	if c.UpdatedAt.IsZero() {
		c.UpdatedAt = m.now()
	}
	ms.meta = c
	return nil
}

// Delete implements [Store].
func (m *MemStore) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.session(id, "delete"); err != nil {
		return err
	}
	delete(m.sessions, id)
	return nil
}

// Append implements [Store].
func (m *MemStore) Append(_ context.Context, id string, entries ...Entry) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.session(id, "append")
	if err != nil {
		return 0, err
	}
	entries = append([]Entry(nil), entries...)
	last, err := PrepareAppend(entries, s.lastSeq+1, m.now())
	if err != nil {
		return 0, errorf(id, "append", err)
	}
	if len(entries) == 0 {
		return s.lastSeq, nil
	}
	encoded, err := encodeAll(entries)
	if err != nil {
		return 0, errorf(id, "append", err)
	}
	s.entries = append(s.entries, encoded...)
	s.lastSeq = last
	return last, nil
}

func encodeAll(entries []Entry) ([][]byte, error) {
	out := make([][]byte, len(entries))
	for i := range entries {
		b, err := json.Marshal(&entries[i])
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrInvalid, i, err)
		}
		out[i] = b
	}
	return out, nil
}

// Entries implements [Store].
func (m *MemStore) Entries(_ context.Context, id string, afterSeq int64) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		m.mu.Lock()
		s, err := m.session(id, "entries")
		var snapshot [][]byte
		if err == nil {
			snapshot = s.entries[:len(s.entries):len(s.entries)]
		}
		m.mu.Unlock()
		if err != nil {
			yield(Entry{}, err)
			return
		}
		for _, raw := range snapshot {
			var e Entry
			if err := json.Unmarshal(raw, &e); err != nil {
				yield(Entry{}, errorf(id, "entries", err))
				return
			}
			if e.Seq > afterSeq && !yield(e, nil) {
				return
			}
		}
	}
}

// Fork implements [Store].
func (m *MemStore) Fork(ctx context.Context, id string, atSeq int64) (*Session, error) {
	var all []Entry
	for e, err := range m.Entries(ctx, id, 0) {
		if err != nil {
			return nil, err
		}
		all = append(all, e)
	}
	kept := ForkEntries(all, atSeq)
	encoded, err := encodeAll(kept)
	if err != nil {
		return nil, errorf(id, "fork", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	parent, err := m.session(id, "fork")
	if err != nil {
		return nil, err
	}
	child := ForkSession(&parent.meta, kept, m.now())
	ms := &memSession{meta: *child, entries: encoded}
	if len(kept) > 0 {
		ms.lastSeq = kept[len(kept)-1].Seq
	}
	m.sessions[child.ID] = ms
	c := *child
	return &c, nil
}

// ForkSession returns the metadata of a fork of parent holding kept (the
// result of [ForkEntries]): a new id, the parent's work dir, caller, workspace, title, preview
// and model, no usage, created now. Stores call it from Fork.
func ForkSession(parent *Session, kept []Entry, now time.Time) *Session {
	s := &Session{ID: NewID(), WorkDir: parent.WorkDir, Caller: parent.Caller, Workspace: parent.Workspace, Title: parent.Title,
		Preview:   parent.Preview,
		CreatedAt: now, UpdatedAt: now, ParentID: parent.ID, Model: parent.Model}
	if len(kept) > 0 {
		s.ForkSeq = kept[len(kept)-1].Seq
	}
	return s
}

// Rewrite implements [Store].
func (m *MemStore) Rewrite(_ context.Context, id string, entries []Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.session(id, "rewrite")
	if err != nil {
		return err
	}
	entries = append([]Entry(nil), entries...)
	last, err := PrepareAppend(entries, s.lastSeq+1, m.now())
	if err != nil {
		return errorf(id, "rewrite", err)
	}
	encoded, err := encodeAll(entries)
	if err != nil {
		return errorf(id, "rewrite", err)
	}
	s.entries = encoded
	if len(entries) > 0 {
		s.lastSeq = last
	}
	return nil
}
