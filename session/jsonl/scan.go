package jsonl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/reinhq/rein/session"
)

// decodeLine decodes one line of a log (without its newline) into a valid
// entry with a positive seq.
func decodeLine(line []byte) (session.Entry, error) {
	var e session.Entry
	if err := json.Unmarshal(line, &e); err != nil {
		return e, err
	}
	if e.Seq <= 0 {
		return e, fmt.Errorf("seq %d", e.Seq)
	}
	return e, e.Validate()
}

// peekSeq reads the seq of a line as Entry encodes it, {"seq":N,…,
// without decoding the rest.
func peekSeq(line []byte) (int64, bool) {
	const prefix = `{"seq":`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return 0, false
	}
	var n int64
	i := len(prefix)
	for ; i < len(line) && line[i] >= '0' && line[i] <= '9' && i < len(prefix)+18; i++ {
		n = n*10 + int64(line[i]-'0')
	}
	if i == len(prefix) || i >= len(line) || line[i] != ',' {
		return 0, false
	}
	return n, true
}

// line is one line of a log as read, and what decoding it gave.
type line struct {
	off, n     int64 // where it is in the file, newline included
	num        int64 // its number, from 1
	start, end int   // its bytes (without newline) in the batch buffer
	complete   bool  // it ends with a newline
	skipped    bool  // its seq is at most the reader's cursor: not decoded
	seq        int64 // the seq peeked when skipped
	entry      session.Entry
	err        error
}

// batch is a run of lines decoded together.
type batch struct {
	buf   []byte
	lines []line
	done  chan struct{} // closed once decoded
}

// decode decodes every line of the batch, except those before skip.
func (b *batch) decode(skip int64) {
	for i := range b.lines {
		l := &b.lines[i]
		data := b.buf[l.start:l.end]
		if !l.complete || len(data) == 0 {
			continue
		}
		if seq, ok := peekSeq(data); ok && seq <= skip {
			l.skipped, l.seq = true, seq
			continue
		}
		l.entry, l.err = decodeLine(data)
	}
	close(b.done)
}

// The size of a batch: lines are handed to the decoders this many bytes or
// lines at a time.
const (
	batchBytes = 512 << 10
	batchLines = 2048
)

// readBatches reads r into batches of lines, sending each to work (to be
// decoded) and then to order (to be consumed in order), until the end of r
// or until stop is closed. It returns the read error, if any.
func readBatches(r io.Reader, work, order chan<- *batch, stop <-chan struct{}) error {
	br := bufio.NewReaderSize(r, 256<<10)
	var off, num int64
	b := &batch{buf: make([]byte, 0, batchBytes), done: make(chan struct{})}
	send := func() bool {
		for _, ch := range []chan<- *batch{work, order} {
			select {
			case ch <- b:
			case <-stop:
				return false
			}
		}
		b = &batch{buf: make([]byte, 0, batchBytes), done: make(chan struct{})}
		return true
	}
	for {
		start := len(b.buf)
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			b.buf = append(b.buf, chunk...)
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		n := len(b.buf) - start
		if n > 0 {
			num++
			complete := b.buf[len(b.buf)-1] == '\n'
			end := len(b.buf)
			if complete {
				end--
			}
			b.lines = append(b.lines, line{off: off, n: int64(n), num: num, start: start, end: end, complete: complete})
			off += int64(n)
		}
		if err != nil || len(b.buf) >= batchBytes || len(b.lines) >= batchLines {
			if len(b.lines) > 0 && !send() {
				return nil
			}
			if err != nil {
				return nil
			}
		}
	}
}

// sequencer applies, in file order, the checks that depend on order.
type sequencer struct {
	last int64 // seq of the last good entry
	skip int64 // the reader's cursor
}

// accept judges one decoded line: an entry to yield, a damage report, or
// nothing (an empty line, a line before the cursor).
func (s *sequencer) accept(b *batch, l *line) (*session.Entry, *session.Damage) {
	switch {
	case !l.complete:
		return nil, &session.Damage{Line: l.num, Offset: l.off, Bytes: l.n, Reason: tornReason(b.buf[l.start:l.end])}
	case l.start == l.end:
		return nil, nil
	case l.skipped:
		if l.seq > s.last {
			s.last = l.seq
		}
		return nil, nil
	}
	err := l.err
	if err == nil && l.entry.Seq <= s.last {
		err = fmt.Errorf("seq %d does not follow %d", l.entry.Seq, s.last)
	}
	if err != nil {
		return nil, &session.Damage{Line: l.num, Offset: l.off, Bytes: l.n, Reason: "corrupt: " + shorten(err.Error())}
	}
	s.last = l.entry.Seq
	if l.entry.Seq <= s.skip {
		return nil, nil
	}
	return &l.entry, nil
}

// scanLog reads a log and yields its entries with Seq > skip, and heal
// entries (Seq 0) for the damaged lines from there on. Lines are decoded in
// parallel, yielded in order. It returns a read error, or ctx's error.
func scanLog(ctx context.Context, r io.Reader, skip int64, yield func(session.Entry, error) bool) error {
	workers := runtime.GOMAXPROCS(0)
	work := make(chan *batch, workers)
	order := make(chan *batch, 2*workers)
	stop, readerDone := make(chan struct{}), make(chan struct{})
	defer func() {
		close(stop)
		<-readerDone // the reader no longer touches r
	}()
	var readErr error
	go func() {
		defer close(readerDone)
		readErr = readBatches(r, work, order, stop)
		close(work)
		close(order)
	}()
	for range workers {
		go func() {
			for b := range work {
				b.decode(skip)
			}
		}()
	}
	seq := sequencer{skip: skip}
	corrupt := 0
	for b := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		<-b.done
		for i := range b.lines {
			e, d := seq.accept(b, &b.lines[i])
			if d != nil && b.lines[i].complete {
				corrupt++
			}
			switch {
			case d != nil && seq.last >= skip:
				if !yield(damageEntry(*d), nil) {
					return nil
				}
			case e != nil:
				if !yield(*e, nil) {
					return nil
				}
			}
		}
	}
	if readErr == nil && corrupt > 0 && seq.last == 0 && skip == 0 {
		return unreadable(corrupt)
	}
	return readErr // set before order was closed
}

func tornReason(raw []byte) string {
	if len(bytes.Trim(raw, "\x00")) == 0 {
		return "torn last line (NUL bytes)"
	}
	return "torn last line"
}

func shorten(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// damageEntry is the unstored heal entry reporting d.
func damageEntry(d session.Damage) session.Entry {
	return session.Entry{Kind: session.KindHeal, Heal: &session.HealRecord{Report: session.Report{Damaged: []session.Damage{d}}}}
}

// goodTail finds where a log's complete lines end and the seq of its last
// line that decodes. Only a torn last line (no newline) and NUL padding
// after the last line are left out of end: a crash can leave them, and
// cutting them loses nothing that was written whole. Complete lines that
// do not decode stay (readers report them), and a log with lines of which
// none decodes is [session.ErrUnreadable]: it is never written over. It
// reads the file from the end, so opening a long log for writing costs
// little.
func goodTail(r io.ReaderAt, size int64) (end, seq int64, err error) {
	end = -1
	found, corrupt := false, 0
	err = eachLineBack(r, size, func(line []byte, next int64) bool {
		if end < 0 {
			if len(line) > 0 && len(bytes.Trim(line, "\x00")) == 0 {
				return true // NUL padding
			}
			end = next
		}
		if len(line) == 0 {
			return true
		}
		if e, derr := decodeLine(line); derr == nil {
			seq, found = e.Seq, true
			return false
		}
		corrupt++
		return true
	})
	if err != nil {
		return 0, 0, err
	}
	if !found && corrupt > 0 {
		return 0, 0, unreadable(corrupt)
	}
	return max(end, 0), seq, nil
}

// unreadable is the error of a log none of whose n damaged lines can be
// read.
func unreadable(n int) error {
	return fmt.Errorf("%w (%d damaged lines); the file is kept as it is: move it away to start the session afresh, or repair it",
		session.ErrUnreadable, n)
}

// eachLineBack calls fn with each complete line of r's first size bytes
// (without its newline), the last first, and the offset just past it,
// until fn returns false. Bytes after the last newline are not a line.
func eachLineBack(r io.ReaderAt, size int64, fn func(line []byte, next int64) bool) error {
	limit, window, tail := size, int64(64<<10), true
	for limit > 0 {
		start := max(0, limit-window)
		buf := make([]byte, limit-start)
		if _, err := r.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if tail {
			p := bytes.LastIndexByte(buf, '\n')
			if p < 0 {
				if start == 0 {
					return nil
				}
				window *= 4
				continue
			}
			buf, tail = buf[:p+1], false
		}
		visited := false
		for len(buf) > 0 {
			q := bytes.LastIndexByte(buf[:len(buf)-1], '\n')
			if q < 0 && start > 0 {
				break // the line starts before the window
			}
			if !fn(buf[q+1:len(buf)-1], start+int64(len(buf))) {
				return nil
			}
			buf, visited = buf[:q+1], true
		}
		limit = start + int64(len(buf))
		if !visited {
			window *= 4
		}
	}
	return nil
}
