package session

import (
	"context"
	"fmt"
)

// LogWriter is a [Store] that appends to a session's log and changes the
// session's record in one transaction: one commit where Append and
// Update wait for two (issue 30). session/sqlite is one.
type LogWriter interface {
	// AppendUpdate appends entries to the log of session id as Append
	// does, then gives change the session's stored record; when change
	// returns true the record is stored as Update would store it. All of
	// it or nothing. change runs inside the transaction: it must only
	// change the record it is given.
	AppendUpdate(ctx context.Context, id string, entries []Entry, change func(*Session) bool) (int64, error)
}

// AppendUpdate appends entries to the log of session id and changes its
// record with change (stored when change returns true): in one
// transaction when st is a [LogWriter], else by Append, Get and Update
// in that order, stopping at the first error (the entries stay when the
// record's update fails). A nil change is Append alone. It returns the
// last seq of the log.
func AppendUpdate(ctx context.Context, st Store, id string, entries []Entry, change func(*Session) bool) (int64, error) {
	if change == nil {
		return st.Append(ctx, id, entries...)
	}
	if lw, ok := st.(LogWriter); ok {
		return lw.AppendUpdate(ctx, id, entries, change)
	}
	last, err := st.Append(ctx, id, entries...)
	if err != nil {
		return 0, err
	}
	s, err := st.Get(ctx, id)
	if err != nil {
		return last, err
	}
	if !change(s) {
		return last, nil
	}
	if err := st.Update(ctx, s); err != nil {
		return last, fmt.Errorf("session %s: update: %w", id, err)
	}
	return last, nil
}
