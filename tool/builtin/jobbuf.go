package builtin

import (
	"os"
	"path/filepath"
	"sync"
)

// jobOutput keeps a background job's output with bounded memory and disk
// (SPEC TOOL-8): the last ringCap bytes in a ring in memory, and the first
// fileCap bytes in a file in the session directory. Offsets count every
// byte the command wrote, from 0; a reader asks from an offset and gets
// what is still kept — from the file below fileBytes, from the ring at and
// above total-len(ring) — and is told where it really starts when the
// bytes in between were not kept (past the file's cap, before the ring).
// It is an io.Writer for exec.Command.Stream; Write never fails, so the
// command is never blocked on a full disk.
type jobOutput struct {
	mu      sync.Mutex
	ring    []byte // grows up to ringCap, then wraps
	ringCap int
	pos     int  // next write position once full
	full    bool // the ring has wrapped
	total   int64

	file      *os.File
	path      string
	fileCap   int64
	fileBytes int64
	fileErr   error
	// lazy: the file (and its directory) is made only when the output
	// outgrows the ring, or its path is shown (see materialize); until
	// then the ring holds every byte.
	lazy bool
	made bool // the file was created

	// changed is closed and replaced on every write, for readers that wait.
	changed chan struct{}
}

// newJobOutput opens the output file at path, in its directory made if
// missing; ringCap and fileCap must be positive.
func newJobOutput(path string, ringCap int, fileCap int64) (*jobOutput, error) {
	o := newLazyJobOutput(path, ringCap, fileCap)
	if err := o.materialize(); err != nil {
		return nil, err
	}
	return o, nil
}

// newLazyJobOutput is newJobOutput with the file made, in its directory
// made too, only when needed: most commands' output fits the ring, and a
// file created and removed for each cost a server's run two inodes
// (issue 30).
func newLazyJobOutput(path string, ringCap int, fileCap int64) *jobOutput {
	return &jobOutput{ringCap: ringCap, path: path, fileCap: fileCap, lazy: true, changed: make(chan struct{})}
}

// materialize makes the file of a lazy output now (its path is about to
// be shown), with what was written so far.
func (o *jobOutput) materialize() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.materializeLocked()
	return o.fileErr
}

// materializeLocked makes a lazy output's file and writes the bytes so
// far, which the ring still holds whole (it is called before the ring
// drops one). A failure is kept in fileErr: the output goes on in the
// ring. Callers hold mu.
func (o *jobOutput) materializeLocked() {
	if !o.lazy {
		return
	}
	o.lazy = false
	if err := os.MkdirAll(filepath.Dir(o.path), 0o700); err != nil {
		o.fileErr = err
		return
	}
	f, err := os.OpenFile(o.path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o600)
	if err != nil {
		o.fileErr = err
		return
	}
	o.file, o.made = f, true
	if o.total > 0 {
		o.writeFileLocked(o.ringAt(0, int(o.total)))
	}
}

// discard closes the output and removes its file, if one was made.
func (o *jobOutput) discard() {
	o.close()
	o.mu.Lock()
	made := o.made
	o.mu.Unlock()
	if made {
		os.Remove(o.path)
	}
}

// Write implements io.Writer.
func (o *jobOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
	if o.lazy && o.total+int64(n) > int64(o.ringCap) {
		o.materializeLocked() // the ring is about to drop bytes
	}
	o.writeFileLocked(p)
	o.toRing(p)
	o.total += int64(n)
	close(o.changed)
	o.changed = make(chan struct{})
	return n, nil
}

// writeFileLocked appends p to the file, up to its cap. Callers hold mu.
func (o *jobOutput) writeFileLocked(p []byte) {
	if o.file == nil || o.fileErr != nil || o.fileBytes >= o.fileCap {
		return
	}
	if room := o.fileCap - o.fileBytes; int64(len(p)) > room {
		p = p[:room]
	}
	w, err := o.file.WriteAt(p, o.fileBytes)
	o.fileBytes += int64(w)
	if err != nil {
		o.fileErr = err
	}
}

func (o *jobOutput) toRing(p []byte) {
	if len(p) >= o.ringCap {
		if cap(o.ring) < o.ringCap {
			o.ring = make([]byte, o.ringCap)
		}
		o.ring = o.ring[:o.ringCap]
		copy(o.ring, p[len(p)-o.ringCap:])
		o.pos, o.full = 0, true
		return
	}
	if !o.full {
		if room := o.ringCap - len(o.ring); len(p) <= room {
			o.ring = append(o.ring, p...)
			if len(o.ring) == o.ringCap {
				o.pos, o.full = 0, true
			}
			return
		}
		// Fill to the cap, then wrap.
		room := o.ringCap - len(o.ring)
		o.ring = append(o.ring, p[:room]...)
		p = p[room:]
		o.pos, o.full = 0, true
	}
	k := copy(o.ring[o.pos:], p)
	if k < len(p) {
		copy(o.ring, p[k:])
	}
	o.pos = (o.pos + len(p)) % o.ringCap
}

// ringStart is the offset of the ring's first byte. Callers hold mu.
func (o *jobOutput) ringStart() int64 { return o.total - int64(len(o.ring)) }

// ringAt copies the ring's bytes from offset off (ringStart ≤ off ≤ total)
// into a new slice, at most n. Callers hold mu.
func (o *jobOutput) ringAt(off int64, n int) []byte {
	i := int(off - o.ringStart()) // index in write order
	avail := len(o.ring) - i
	n = min(n, avail)
	out := make([]byte, 0, n)
	if !o.full {
		return append(out, o.ring[i:i+n]...)
	}
	start := (o.pos + i) % o.ringCap
	first := min(n, o.ringCap-start)
	out = append(out, o.ring[start:start+first]...)
	return append(out, o.ring[:n-first]...)
}

// read returns up to n bytes of output from offset off: from is where they
// really start (above off when the bytes from off were not kept, or past
// the end when off is), next the offset after them.
func (o *jobOutput) read(off int64, n int) (data []byte, from, next int64) {
	o.mu.Lock()
	off = max(off, 0)
	if off >= o.total {
		defer o.mu.Unlock()
		return nil, o.total, o.total
	}
	f, fileBytes := o.file, o.fileBytes
	if f == nil || off >= o.ringStart() || off >= fileBytes {
		// In the ring, or in the gap between the file's cap and the ring.
		defer o.mu.Unlock()
		off = max(off, o.ringStart())
		data = o.ringAt(off, n)
		return data, off, off + int64(len(data))
	}
	o.mu.Unlock()
	// From the file: the bytes below fileBytes are written and never change.
	n = int(min(int64(n), fileBytes-off))
	data = make([]byte, n)
	k, err := f.ReadAt(data, off)
	if err != nil && k < n {
		// The file was closed or failed under us: fall back on the ring.
		o.mu.Lock()
		defer o.mu.Unlock()
		off = max(off, o.ringStart())
		data = o.ringAt(off, n)
		return data, off, off + int64(len(data))
	}
	return data[:k], off, off + int64(k)
}

// size returns how many bytes were written, and how many the file holds.
func (o *jobOutput) size() (total, inFile int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.total, o.fileBytes
}

// wait returns a channel closed at the next write.
func (o *jobOutput) wait() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.changed
}

// close closes the file; reads from it fail afterwards and fall back on
// the ring, so close only once nobody reads (or the file is handed on).
func (o *jobOutput) close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.file == nil {
		return nil
	}
	err := o.file.Close()
	o.file = nil
	if o.fileErr == nil && err != nil {
		o.fileErr = err
	}
	return err
}
