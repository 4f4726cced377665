package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/reinhq/rein/kb"
)

// buildGroup is how many chunks buildPostings analyses into one segment.
const buildGroup = 4096

// buildPostings builds the posting lists of a database whose chunks have
// none (meta postings_stale: migration 0002 left it so for a database
// made by 0001, which FTS5 indexed): it analyses every stored chunk as a
// write does (kb.ChunkTerms), records its length and the totals, and
// writes the lists a group of chunks at a time, merged as writes merge
// them, all in one transaction: a failed build leaves the database as it
// was, to be built on the next open.
func buildPostings(ctx context.Context, db *sql.DB) error {
	m, err := readMeta(ctx, db)
	if err != nil {
		return err
	}
	if !m.stale {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if m, err = readMeta(ctx, tx); err != nil || !m.stale { // another process built them meanwhile
		return err
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO postings (seg, first, data) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	setLength, err := tx.PrepareContext(ctx, `UPDATE chunks SET length = ? WHERE id = ?`)
	if err != nil {
		return err
	}
	defer setLength.Close()
	var chunks, length int64
	for after := int64(0); ; {
		bp, ids, err := readGroup(ctx, tx, after)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			break
		}
		after = ids[len(ids)-1]
		for i, id := range ids {
			if _, err := setLength.ExecContext(ctx, bp.lengths[i], id); err != nil {
				return fmt.Errorf("chunk lengths: %w", err)
			}
			chunks++
			length += int64(bp.lengths[i])
		}
		if err := writeSegment(ctx, tx, ins, bp, ids); err != nil {
			return err
		}
		segs, err := loadSegments(ctx, tx)
		if err != nil {
			return err
		}
		if _, err := compact(ctx, tx, ins, segs); err != nil {
			return fmt.Errorf("merge segments: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE meta SET value = CASE key
		WHEN 'chunks' THEN ? WHEN 'length' THEN ? ELSE 0 END
		WHERE key IN ('chunks', 'length', 'postings_stale')`, chunks, length); err != nil {
		return fmt.Errorf("totals: %w", err)
	}
	if _, err := bump(ctx, tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("build posting lists: %w", err)
	}
	return nil
}

// readGroup analyses the next chunks (by id, after after).
func readGroup(ctx context.Context, tx *sql.Tx, after int64) (*batchPostings, []int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, doc, start_line, end_line, heading, text FROM chunks
		WHERE id > ? ORDER BY id LIMIT ?`, after, buildGroup)
	if err != nil {
		return nil, nil, fmt.Errorf("build posting lists: %w", err)
	}
	defer rows.Close()
	bp := newBatchPostings()
	var ids []int64
	for rows.Next() {
		var id int64
		var c kb.Chunk
		if err := rows.Scan(&id, &c.Doc, &c.Start, &c.End, &c.Heading, &c.Text); err != nil {
			return nil, nil, fmt.Errorf("build posting lists: %w", err)
		}
		ids = append(ids, id)
		bp.add(kb.ChunkTerms(c))
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("build posting lists: %w", err)
	}
	return bp, ids, nil
}
