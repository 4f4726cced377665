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
}

// EventWriter is a [Ledger] that stores an [EventWrite] in one
// transaction: all of it or nothing, one commit where the three calls
// would wait for three (issue 30). session/sqlite is one.
type EventWriter interface {
	// WriteEvent stores w's event as AppendEvents would, its audit record
	// as AppendAudit and its run as UpdateRun, all or none; the errors
	// are theirs.
	WriteEvent(ctx context.Context, w EventWrite) error
}

// WriteEvent stores w in l: in one transaction when l is an
// [EventWriter], else by AppendEvents, AppendAudit and UpdateRun in that
// order, stopping at the first error (what was stored before it stays).
func WriteEvent(ctx context.Context, l Ledger, w EventWrite) error {
	if ew, ok := l.(EventWriter); ok {
		return ew.WriteEvent(ctx, w)
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
