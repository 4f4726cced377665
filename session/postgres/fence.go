package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/session"
)

// fence is the fencing token a write's context carries for one session
// (session.WithFence).
type fence struct {
	sessionID string
	token     int64
}

// fencesOf returns the fences ctx carries for the sessions of ids, one a
// session, sorted by session id: every writer raises fences in that order,
// so two writers of the same sessions never wait for each other. Empty ids
// are skipped.
func fencesOf(ctx context.Context, ids ...string) []fence {
	var out []fence
	for _, id := range ids {
		if id == "" || slices.ContainsFunc(out, func(f fence) bool { return f.sessionID == id }) {
			continue
		}
		if tok, ok := session.FenceOf(ctx, id); ok {
			out = append(out, fence{id, tok})
		}
	}
	slices.SortFunc(out, func(a, b fence) int { return cmp.Compare(a.sessionID, b.sessionID) })
	return out
}

// raiseFence raises the session's fence to the token unless it is higher,
// and returns the fence: the token when the write may go on, a higher one
// when it is refused. The upsert locks the session's row of
// session_fences until the transaction ends, so fenced writes of a
// session take turns, and it always returns the latest fence (after a
// wait, ON CONFLICT DO UPDATE works on the row as the other writer left
// it). A refused write's transaction is rolled back, the fence with it.
const raiseFence = `INSERT INTO session_fences AS f (session_id, token) VALUES ($1, $2)
	ON CONFLICT (session_id) DO UPDATE SET token = GREATEST(f.token, EXCLUDED.token)
	RETURNING token`

// queueFences queues in b the statements that raise fs, whose results
// fail the batch with an error wrapping session.ErrFenced when a token is
// below its fence. They go first in the transaction's first round trip:
// the fence row is the first lock a fenced write takes (UpdateRun, which
// learns the session from the run it locks, excepted), so fenced writers
// never deadlock, and the check costs no round trip of its own. When the
// check fails, the batch's other statements may still run: the caller
// rolls the transaction back.
func queueFences(b *pgx.Batch, fs []fence) {
	for _, f := range fs {
		b.Queue(raiseFence, f.sessionID, f.token).QueryRow(func(row pgx.Row) error {
			var at int64
			if err := row.Scan(&at); err != nil {
				return err
			}
			if at > f.token {
				return fencedError(f, at)
			}
			return nil
		})
	}
}

// fencedError is the error of a write of f.sessionID refused by the fence
// at.
func fencedError(f fence, at int64) error {
	return fmt.Errorf("session %s: token %d is below the fence %d: %w", f.sessionID, f.token, at, session.ErrFenced)
}
