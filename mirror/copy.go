package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reinhq/rein/session"
)

// Copying one session into its mirror.

// copySession brings the copy of sess in db up to date: created when
// missing, its new entries appended, its metadata replaced when changed —
// with the last entries, in one write when db is a session.LogWriter.
// A copy that disagrees with the store is dropped and made again. Copies
// of different sessions may run at once (copyBatch).
func (m *Mirror) copySession(ctx context.Context, db DB, sess *session.Session) (int, error) {
	id := sess.ID
	old, err := db.Get(ctx, id)
	created := errors.Is(err, session.ErrNotFound)
	switch {
	case created:
		c := *sess
		if err := db.Create(ctx, &c); err != nil {
			return 0, err
		}
		m.setChecked(id)
	case err != nil:
		return 0, err
	}
	if !m.isChecked(id) {
		if intact, err := headIntact(ctx, db, id); err != nil || !intact {
			if err != nil {
				return 0, err
			}
			return m.reset(ctx, db, sess, "its copy starts with the placeholders of an interrupted reset")
		}
		m.setChecked(id)
	}
	var last int64
	if !created {
		if last, err = db.Append(ctx, id); err != nil {
			return 0, err
		}
	}
	var meta func(*session.Session) bool // the metadata's change: none for a copy just created or the same
	if !created && !sameMeta(old, sess) {
		meta = func(rec *session.Session) bool {
			*rec = *sess
			return true
		}
	}
	n, err := m.copyEntries(ctx, db, id, last, meta)
	if errors.Is(err, errMismatch) {
		return m.reset(ctx, db, sess, err.Error())
	}
	return n, err
}

// isChecked reports whether the head of id's copy was checked since its
// mirror opened.
func (m *Mirror) isChecked(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.checked[id]
}

// setChecked remembers that the head of id's copy is intact.
func (m *Mirror) setChecked(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.checked) >= maxCached {
		clear(m.checked)
	}
	m.checked[id] = true
}

// reset drops the copy of sess and makes it again.
func (m *Mirror) reset(ctx context.Context, db DB, sess *session.Session, why string) (int, error) {
	m.cfg.Logger.Warn("history mirror: the copy of a session disagrees with the store; copying it again",
		"session_id", sess.ID, "reason", why)
	m.mu.Lock()
	m.stats.Resets++
	m.mu.Unlock()
	return m.copyWhole(ctx, db, sess)
}

// copyWhole copies sess and its whole log into db, replacing any copy.
// A log whose seqs do not run on from its first is errGapped.
func (m *Mirror) copyWhole(ctx context.Context, db DB, sess *session.Session) (int, error) {
	if err := db.Delete(ctx, sess.ID); err != nil && !errors.Is(err, session.ErrNotFound) {
		return 0, err
	}
	c := *sess
	if err := db.Create(ctx, &c); err != nil {
		return 0, err
	}
	first, err := m.firstSeq(ctx, sess.ID)
	switch {
	case err != nil:
		return 0, err
	case first == 0:
		return 0, nil
	case first > 1:
		return m.copyShifted(ctx, db, sess.ID, first)
	}
	n, err := m.copyEntries(ctx, db, sess.ID, 0, nil)
	if errors.Is(err, errMismatch) {
		err = fmt.Errorf("%w: %v", errGapped, err)
	}
	return n, err
}

// copyShifted copies a log whose seqs start at first > 1 (the store
// rewrote it): placeholders take seqs 1 to first-1, then a rewrite
// replaces them with the log, numbered from first as in the store.
func (m *Mirror) copyShifted(ctx context.Context, db DB, id string, first int64) (int, error) {
	if first-1 > maxFillers {
		return 0, fmt.Errorf("%w: its first seq is %d", errGapped, first)
	}
	var log []session.Entry
	for e, err := range m.cfg.Store.Entries(ctx, id, 0) {
		if err != nil {
			return 0, fmt.Errorf("read the store: %w", err)
		}
		seq, ok := seqOf(e)
		if want := first + int64(len(log)); !ok || seq != want {
			return 0, fmt.Errorf("%w: entry %d where %d was expected", errGapped, seq, want)
		}
		e.Seq = seq
		log = append(log, e)
	}
	for left := first - 1; left > 0; {
		k := min(left, int64(m.cfg.Batch))
		fill := make([]session.Entry, k)
		for i := range fill {
			fill[i] = session.Entry{Kind: session.KindHeal, Heal: &session.HealRecord{
				Report: session.Report{Damaged: []session.Damage{{Reason: fillerReason}}}}}
		}
		if _, err := db.Append(ctx, id, fill...); err != nil {
			return 0, err
		}
		left -= k
	}
	if err := db.Rewrite(ctx, id, log); err != nil {
		return 0, err
	}
	last, err := db.Append(ctx, id)
	if err != nil {
		return 0, err
	}
	if want := log[len(log)-1].Seq; last != want {
		return 0, fmt.Errorf("%w: the mirror numbered the log up to %d, the store up to %d", errGapped, last, want)
	}
	return len(log), nil
}

// copyEntries appends the store's entries after last to db, a batch at a
// time, checking that db numbers them as the store did. meta, when set,
// changes the copy's record with the last batch (or alone, when there are
// no entries), as session.AppendUpdate does.
func (m *Mirror) copyEntries(ctx context.Context, db DB, id string, last int64, meta func(*session.Session) bool) (int, error) {
	total := 0
	for {
		batch, more, err := m.readBatch(ctx, id, last)
		if err != nil {
			return total, err
		}
		var got int64
		switch {
		case meta != nil && !more:
			got, err = session.AppendUpdate(ctx, db, id, batch, meta)
		case len(batch) == 0:
			return total, nil
		default:
			got, err = db.Append(ctx, id, batch...)
		}
		if err != nil {
			return total, err
		}
		if want := last + int64(len(batch)); got != want {
			return total, fmt.Errorf("%w: the mirror numbered entries up to %d, the store up to %d", errMismatch, got, want)
		}
		total, last = total+len(batch), got
		if !more {
			return total, nil
		}
	}
}

// readBatch reads up to Batch entries of the store after last; the store's
// reads are not held open while the mirror writes. more reports a full
// batch.
func (m *Mirror) readBatch(ctx context.Context, id string, last int64) ([]session.Entry, bool, error) {
	var batch []session.Entry
	for e, err := range m.cfg.Store.Entries(ctx, id, last) {
		if err != nil {
			return nil, false, fmt.Errorf("read the store: %w", err)
		}
		seq, ok := seqOf(e)
		if want := last + int64(len(batch)) + 1; !ok || seq != want {
			return nil, false, fmt.Errorf("%w: the store's next entry is %d, the mirror's %d", errMismatch, seq, want)
		}
		e.Seq = seq
		batch = append(batch, e)
		if len(batch) == m.cfg.Batch {
			return batch, true, nil
		}
	}
	return batch, false, nil
}

// firstSeq is the seq of the store's first entry of id, 0 when it has none.
func (m *Mirror) firstSeq(ctx context.Context, id string) (int64, error) {
	for e, err := range m.cfg.Store.Entries(ctx, id, 0) {
		if err != nil {
			return 0, fmt.Errorf("read the store: %w", err)
		}
		seq, _ := seqOf(e)
		return seq, nil
	}
	return 0, nil
}

// seqOf is where an entry the store yields belongs: its seq, or for the
// report of a damaged row (Seq 0) the row's seq, which SQL stores give as
// the damage's line. The mirror stores such a report in the row's place.
func seqOf(e session.Entry) (int64, bool) {
	if e.Seq > 0 {
		return e.Seq, true
	}
	if e.Kind == session.KindHeal && e.Heal != nil && len(e.Heal.Report.Damaged) == 1 && e.Heal.Report.Damaged[0].Line > 0 {
		return e.Heal.Report.Damaged[0].Line, true
	}
	return 0, false
}

// headIntact reports whether db's copy of id does not start with a
// placeholder (a reset interrupted between its two writes).
func headIntact(ctx context.Context, db DB, id string) (bool, error) {
	for e, err := range db.Entries(ctx, id, 0) {
		if err != nil {
			return false, err
		}
		return !(e.Kind == session.KindHeal && e.Heal != nil && len(e.Heal.Report.Damaged) == 1 &&
			e.Heal.Report.Damaged[0].Reason == fillerReason), nil
	}
	return true, nil
}

// sameMeta reports whether two sessions' metadata are equal as stored
// (JSON: times compare by instant and offset, not by monotonic reading).
func sameMeta(a, b *session.Session) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
