package session

import (
	"context"
	"fmt"
)

// EventWrite is a durable event of a run's stream with the records it
// brings, stored together: the audit record it causes (a tool call's end,
// the run's end) and the run's new state (its end), each optional.
type EventWrite struct {
	Event Event
	Audit *AuditRecord
	Run   *Run
	// Log, when set, is what the event brings to the log of its session
	// (Event.SessionID), stored first: a run's log entry and its stream
	// event in one commit where the two writes would wait for two (issue
	// 30). Only a ledger that is also the session's [Store] keeps it.
	Log *LogAppend
}

// LogAppend is entries appended to a session's log with a change of the
// session's record, as [AppendUpdate] stores them.
type LogAppend struct {
	Entries []Entry
	// Change, when set, is given the session's stored record; when it
	// returns true the record is stored (see [LogWriter]).
	Change func(*Session) bool
}

// EventWriter is a [Ledger] that stores an [EventWrite] in one
// transaction: all of it or nothing, one commit where the three calls
// would wait for three (issue 30). session/sqlite is one.
type EventWriter interface {
	// WriteEvent stores w's log entries as AppendUpdate would (when it
	// is also the session's Store), its event as AppendEvents would, its
	// audit record as AppendAudit and its run as UpdateRun, all or none;
	// the errors are theirs.
	WriteEvent(ctx context.Context, w EventWrite) error
}

// WriteEvent stores w in l: in one transaction when l is an
// [EventWriter], else by AppendUpdate (its Log, when l is a [Store]),
// AppendEvents, AppendAudit and UpdateRun in that order, stopping at the
// first error (what was stored before it stays). A Log for a ledger that
// is no Store is an error wrapping [ErrInvalid], and nothing is stored.
func WriteEvent(ctx context.Context, l Ledger, w EventWrite) error {
	if ew, ok := l.(EventWriter); ok {
		return ew.WriteEvent(ctx, w)
	}
	if w.Log != nil {
		st, ok := l.(Store)
		if !ok {
			return fmt.Errorf("%w: the event brings log entries, and this ledger keeps no session log", ErrInvalid)
		}
		if _, err := AppendUpdate(ctx, st, w.Event.SessionID, w.Log.Entries, w.Log.Change); err != nil {
			return err
		}
	}
	if err := l.AppendEvents(ctx, w.Event); err != nil {
		return err
	}
	if w.Audit != nil {
		if err := l.AppendAudit(ctx, *w.Audit); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
	}
	if w.Run != nil {
		return l.UpdateRun(ctx, w.Run)
	}
	return nil
}
