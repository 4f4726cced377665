package session

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"
)

// MemLedger is a [Ledger] kept in memory, for tests. What it returns are
// copies: changing them changes nothing stored.
type MemLedger struct {
	mu         sync.Mutex
	now        func() time.Time
	workspaces map[string]Workspace
	runs       map[string]*Run // by id
	runSeq     int64           // the Seq of the newest run
	events     map[string][]Event
	audit      []AuditRecord
	auditID    int64 // the ID of the newest audit record
	// rules are the callers' kept rules, by caller, directory, action and
	// rule.
	rules map[callerRuleKey]CallerRule
}

// callerRuleKey is the unique key of a caller's rule.
type callerRuleKey struct{ caller, dir, action, rule string }

// NewMemLedger returns an empty in-memory ledger.
func NewMemLedger() *MemLedger {
	return &MemLedger{now: time.Now, workspaces: map[string]Workspace{}, runs: map[string]*Run{}, events: map[string][]Event{},
		rules: map[callerRuleKey]CallerRule{}}
}

var _ Ledger = (*MemLedger)(nil)

// CreateWorkspace implements [Ledger].
func (m *MemLedger) CreateWorkspace(_ context.Context, w *Workspace) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := PrepareWorkspace(w, m.now()); err != nil {
		return err
	}
	if _, ok := m.workspaces[w.ID]; ok {
		return fmt.Errorf("workspace %s: create: %w", w.ID, ErrExists)
	}
	m.workspaces[w.ID] = *w
	return nil
}

// GetWorkspace implements [Ledger].
func (m *MemLedger) GetWorkspace(_ context.Context, id string) (*Workspace, error) {
	if err := ValidID(id); err != nil {
		return nil, fmt.Errorf("workspace: get: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.workspaces[id]
	if !ok {
		return nil, fmt.Errorf("workspace %s: get: %w", id, ErrNotFound)
	}
	return &w, nil
}

// ListWorkspaces implements [Ledger].
func (m *MemLedger) ListWorkspaces(_ context.Context, caller string) ([]*Workspace, error) {
	if caller == "" {
		return nil, fmt.Errorf("workspaces: list: %w: empty caller", ErrInvalid)
	}
	m.mu.Lock()
	var out []*Workspace
	for _, w := range m.workspaces {
		if w.Caller == caller {
			out = append(out, &w)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b *Workspace) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return out, nil
}

// CreateRun implements [Ledger].
func (m *MemLedger) CreateRun(_ context.Context, r *Run) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := PrepareRun(r, m.now()); err != nil {
		return err
	}
	if _, ok := m.runs[r.ID]; ok {
		return fmt.Errorf("run %s: create: %w", r.ID, ErrExists)
	}
	m.runSeq++
	r.Seq = m.runSeq
	m.runs[r.ID] = copyRun(r)
	return nil
}

// UpdateRun implements [Ledger].
func (m *MemLedger) UpdateRun(_ context.Context, r *Run) error {
	if err := CheckRunUpdate(r); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.runs[r.ID]
	if !ok {
		return fmt.Errorf("run %s: update: %w", r.ID, ErrNotFound)
	}
	m.runs[r.ID] = UpdatedRun(old, r)
	return nil
}

// GetRun implements [Ledger].
func (m *MemLedger) GetRun(_ context.Context, id string) (*Run, error) {
	if err := ValidID(id); err != nil {
		return nil, fmt.Errorf("run: get: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[id]
	if !ok {
		return nil, fmt.Errorf("run %s: get: %w", id, ErrNotFound)
	}
	return copyRun(r), nil
}

// ListRuns implements [Ledger].
func (m *MemLedger) ListRuns(_ context.Context, f RunFilter) ([]*Run, error) {
	m.mu.Lock()
	var out []*Run
	for _, r := range m.runs {
		if f.SessionID != "" && r.SessionID != f.SessionID || f.Caller != "" && r.Caller != f.Caller ||
			len(f.Statuses) > 0 && !slices.Contains(f.Statuses, r.Status) || r.Seq <= f.AfterSeq {
			continue
		}
		out = append(out, copyRun(r))
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b *Run) int { return cmp.Compare(a.Seq, b.Seq) })
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// AppendEvents implements [Ledger].
func (m *MemLedger) AppendEvents(_ context.Context, evs ...Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	evs = slices.Clone(evs)
	last := func(id string) (int64, error) {
		if s := m.events[id]; len(s) > 0 {
			return s[len(s)-1].ID, nil
		}
		return 0, nil
	}
	if err := PrepareEvents(evs, m.now(), last); err != nil {
		return err
	}
	for _, e := range evs {
		e.Data = bytes.Clone(e.Data)
		m.events[e.SessionID] = append(m.events[e.SessionID], e)
	}
	return nil
}

// Events implements [Ledger].
func (m *MemLedger) Events(_ context.Context, sessionID string, afterID int64, limit int) ([]Event, error) {
	if err := ValidID(sessionID); err != nil {
		return nil, fmt.Errorf("events: read: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	stored := m.events[sessionID]
	i, _ := slices.BinarySearchFunc(stored, afterID+1, func(e Event, id int64) int { return cmp.Compare(e.ID, id) })
	var out []Event
	for _, e := range stored[i:] {
		if limit > 0 && len(out) == limit {
			break
		}
		e.Data = bytes.Clone(e.Data)
		out = append(out, e)
	}
	return out, nil
}

// LastEventID implements [Ledger].
func (m *MemLedger) LastEventID(_ context.Context, sessionID string) (int64, error) {
	if err := ValidID(sessionID); err != nil {
		return 0, fmt.Errorf("events: last id: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.events[sessionID]; len(s) > 0 {
		return s[len(s)-1].ID, nil
	}
	return 0, nil
}

// DeleteEvents implements [Ledger].
func (m *MemLedger) DeleteEvents(_ context.Context, sessionID string) error {
	if err := ValidID(sessionID); err != nil {
		return fmt.Errorf("events: delete: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.events, sessionID)
	for id, r := range m.runs {
		if r.SessionID == sessionID {
			delete(m.runs, id)
		}
	}
	return nil
}

// AppendAudit implements [Ledger].
func (m *MemLedger) AppendAudit(_ context.Context, recs ...AuditRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	recs = slices.Clone(recs)
	if err := PrepareAudit(recs, m.now()); err != nil {
		return err
	}
	for _, r := range recs {
		m.auditID++
		r.ID = m.auditID
		r.Data = bytes.Clone(r.Data)
		m.audit = append(m.audit, r)
	}
	return nil
}

// Audit implements [Ledger].
func (m *MemLedger) Audit(_ context.Context, f AuditFilter) ([]AuditRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []AuditRecord
	for _, r := range m.audit {
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
		if r.ID <= f.AfterID || f.Caller != "" && r.Caller != f.Caller || f.SessionID != "" && r.SessionID != f.SessionID ||
			f.RunID != "" && r.RunID != f.RunID || f.Kind != "" && r.Kind != f.Kind ||
			!f.Since.IsZero() && r.Time.Before(f.Since) || !f.Until.IsZero() && !r.Time.Before(f.Until) {
			continue
		}
		r.Data = bytes.Clone(r.Data)
		out = append(out, r)
	}
	return out, nil
}

// AddCallerRule implements [Ledger].
func (m *MemLedger) AddCallerRule(_ context.Context, r *CallerRule) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := PrepareCallerRule(r, m.now()); err != nil {
		return err
	}
	k := callerRuleKey{r.Caller, r.Dir, r.Action, r.Rule}
	if _, ok := m.rules[k]; !ok {
		m.rules[k] = *r
	}
	return nil
}

// ListCallerRules implements [Ledger].
func (m *MemLedger) ListCallerRules(_ context.Context, caller, dir string) ([]CallerRule, error) {
	if err := CheckCallerDir(caller, dir); err != nil {
		return nil, fmt.Errorf("caller rules: list: %w", err)
	}
	m.mu.Lock()
	var out []CallerRule
	for k, r := range m.rules {
		if k.caller == caller && k.dir == dir {
			out = append(out, r)
		}
	}
	m.mu.Unlock()
	SortCallerRules(out)
	return out, nil
}

func copyRun(r *Run) *Run {
	c := *r
	c.Options = bytes.Clone(r.Options)
	return &c
}

// The checks below are every ledger's: backends call them so that all
// accept and reject the same input.

// PrepareWorkspace validates w for [Ledger.CreateWorkspace] and fills its
// defaults: an empty ID gets [NewID], a zero CreatedAt now. A nil w, an
// unsafe ID (see [ValidID]), an empty Caller or a Kind other than project
// and chat is an error wrapping [ErrInvalid]; w is then left as it was.
func PrepareWorkspace(w *Workspace, now time.Time) error {
	if w == nil {
		return fmt.Errorf("workspace: create: %w: nil workspace", ErrInvalid)
	}
	bad := func(err error) error { return fmt.Errorf("workspace %s: create: %w", w.ID, err) }
	if w.ID != "" {
		if err := ValidID(w.ID); err != nil {
			return bad(err)
		}
	}
	if w.Caller == "" {
		return bad(fmt.Errorf("%w: empty caller", ErrInvalid))
	}
	if w.Kind != WorkspaceProject && w.Kind != WorkspaceChat {
		return bad(fmt.Errorf("%w: workspace kind %q (want %q or %q)", ErrInvalid, w.Kind, WorkspaceProject, WorkspaceChat))
	}
	if w.ID == "" {
		w.ID = NewID()
	}
	if w.CreatedAt.IsZero() {
		w.CreatedAt = now
	}
	return nil
}

// PrepareRun validates r for [Ledger.CreateRun] and fills its defaults: an
// empty ID gets [NewID], a zero CreatedAt now, an empty Status [RunQueued].
// A nil r, an unsafe ID or SessionID, an unknown Status or Options that are
// not JSON is an error wrapping [ErrInvalid]; r is then left as it was. The
// backend assigns Seq.
func PrepareRun(r *Run, now time.Time) error {
	if r == nil {
		return fmt.Errorf("run: create: %w: nil run", ErrInvalid)
	}
	bad := func(err error) error { return fmt.Errorf("run %s: create: %w", r.ID, err) }
	if r.ID != "" {
		if err := ValidID(r.ID); err != nil {
			return bad(err)
		}
	}
	if err := ValidID(r.SessionID); err != nil {
		return bad(fmt.Errorf("session: %w", err))
	}
	if r.Status != "" && !knownStatus(r.Status) {
		return bad(fmt.Errorf("%w: status %q", ErrInvalid, r.Status))
	}
	if len(r.Options) > 0 && !json.Valid(r.Options) {
		return bad(fmt.Errorf("%w: options are not JSON", ErrInvalid))
	}
	if r.ID == "" {
		r.ID = NewID()
	}
	if r.Status == "" {
		r.Status = RunQueued
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = now
	}
	return nil
}

// CheckRunUpdate validates r for [Ledger.UpdateRun]: a nil r, an unsafe ID
// or an unknown Status is an error wrapping [ErrInvalid].
func CheckRunUpdate(r *Run) error {
	if r == nil {
		return fmt.Errorf("run: update: %w: nil run", ErrInvalid)
	}
	if err := ValidID(r.ID); err != nil {
		return fmt.Errorf("run: update: %w", err)
	}
	if !knownStatus(r.Status) {
		return fmt.Errorf("run %s: update: %w: status %q", r.ID, ErrInvalid, r.Status)
	}
	return nil
}

// UpdatedRun returns stored with the state of update (Status, StartedAt,
// EndedAt, Reason, Error, Turns, Usage, CostUSD): what [Ledger.UpdateRun]
// keeps. A final update without Images drops the stored ones: the run's
// user message, images included, is in the session log by then.
func UpdatedRun(stored, update *Run) *Run {
	c := copyRun(stored)
	if update.Status.Final() && len(update.Images) == 0 {
		c.Images = nil
	}
	c.Status, c.StartedAt, c.EndedAt = update.Status, update.StartedAt, update.EndedAt
	c.Reason, c.Error, c.Turns, c.Usage, c.CostUSD = update.Reason, update.Error, update.Turns, update.Usage, update.CostUSD
	return c
}

func knownStatus(s RunStatus) bool {
	switch s {
	case RunQueued, RunRunning, RunCompleted, RunFailed, RunCancelled, RunInterrupted:
		return true
	}
	return false
}

// PrepareEvents validates evs for [Ledger.AppendEvents] and sets a zero
// Time to now. last returns the ID of a session's newest stored event (0
// when none). An unsafe SessionID, an ID of 0 or less, an empty Type, Data
// that is not JSON, or an ID not above the session's previous one (stored
// or earlier in evs) is an error wrapping [ErrInvalid]; evs may then be
// partly changed, and nothing of it must be stored.
func PrepareEvents(evs []Event, now time.Time, last func(sessionID string) (int64, error)) error {
	prev := map[string]int64{}
	for i := range evs {
		e := &evs[i]
		bad := func(format string, a ...any) error {
			return fmt.Errorf("events of session %s: append: event %d: %w: %s", e.SessionID, i, ErrInvalid, fmt.Sprintf(format, a...))
		}
		if err := ValidID(e.SessionID); err != nil {
			return fmt.Errorf("events: append: event %d: %w", i, err)
		}
		switch {
		case e.ID <= 0:
			return bad("id %d (want above 0)", e.ID)
		case e.Type == "":
			return bad("empty type")
		case len(e.Data) > 0 && !json.Valid(e.Data):
			return bad("data is not JSON")
		}
		p, ok := prev[e.SessionID]
		if !ok {
			var err error
			if p, err = last(e.SessionID); err != nil {
				return fmt.Errorf("events of session %s: append: %w", e.SessionID, err)
			}
		}
		if e.ID <= p {
			return bad("id %d does not follow %d", e.ID, p)
		}
		prev[e.SessionID] = e.ID
		if e.Time.IsZero() {
			e.Time = now
		}
	}
	return nil
}

// PrepareAudit validates recs for [Ledger.AppendAudit] and sets a zero Time
// to now. An empty Kind or Data that is not JSON is an error wrapping
// [ErrInvalid]. The backend assigns the IDs.
func PrepareAudit(recs []AuditRecord, now time.Time) error {
	for i := range recs {
		r := &recs[i]
		switch {
		case r.Kind == "":
			return fmt.Errorf("audit: append: record %d: %w: empty kind", i, ErrInvalid)
		case len(r.Data) > 0 && !json.Valid(r.Data):
			return fmt.Errorf("audit: append: record %d: %w: data is not JSON", i, ErrInvalid)
		}
		if r.Time.IsZero() {
			r.Time = now
		}
	}
	return nil
}
