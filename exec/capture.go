package exec

import (
	"io"
	"os"
	"path/filepath"
)

// capture collects a command's combined output with bounded memory: the first
// max bytes in head, the last max bytes in a ring once head is full, and — from
// the moment head overflows — every byte in a spill file, up to maxSpill bytes
// of output in all (0 or negative: no limit). When the output passes maxSpill,
// limit is closed once, so the command can be stopped.
type capture struct {
	max      int
	spillDir string
	maxSpill int64
	limit    chan struct{} // closed when total passes maxSpill; nil: nobody listens
	limited  bool
	// stream, when set, takes the output; head and ring then keep only a
	// short start and end (see stream.go) and nothing is spilled.
	stream io.Writer

	head  []byte
	ring  []byte // allocated on overflow; len(ring) == max
	pos   int    // next write position in ring
	full  bool   // ring has wrapped
	total int64

	spill      *os.File
	spillBytes int64
	spillErr   error
}

// Write never fails: output the spill file cannot take is still counted and
// kept in the ring, so the command is never blocked on a full disk.
func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if c.maxSpill > 0 && c.total > c.maxSpill && !c.limited {
		c.limited = true
		if c.limit != nil {
			close(c.limit)
		}
	}
	if c.stream != nil {
		c.streamOut(p)
	}
	if c.ring == nil {
		room := c.max - len(c.head)
		if len(p) <= room {
			c.head = append(c.head, p...)
			return n, nil
		}
		c.head = append(c.head, p[:room]...)
		p = p[room:]
		c.overflow()
	}
	c.toSpill(p)
	c.toRing(p)
	return n, nil
}

// overflow starts the ring and the spill file; the spill file gets what head
// holds so far, so it ends up holding the whole output.
func (c *capture) overflow() {
	c.ring = make([]byte, c.max)
	c.toRing(c.head)
	if c.stream != nil {
		return // the stream keeps the output
	}
	if c.spillDir == "" {
		c.spillDir = filepath.Join(os.TempDir(), "rein")
	}
	if err := os.MkdirAll(c.spillDir, 0o700); err != nil {
		c.spillErr = err
		return
	}
	f, err := os.CreateTemp(c.spillDir, "output-*.log")
	if err != nil {
		c.spillErr = err
		return
	}
	c.spill = f
	c.toSpill(c.head)
}

// toSpill appends p to the spill file, up to maxSpill bytes in all: the
// file keeps the first maxSpill bytes of the output.
func (c *capture) toSpill(p []byte) {
	if c.spill == nil || c.spillErr != nil {
		return
	}
	if c.maxSpill > 0 && c.spillBytes+int64(len(p)) > c.maxSpill {
		p = p[:max(0, c.maxSpill-c.spillBytes)]
	}
	if len(p) == 0 {
		return
	}
	n, err := c.spill.Write(p)
	c.spillBytes += int64(n)
	if err != nil {
		c.spillErr = err
	}
}

func (c *capture) toRing(p []byte) {
	if c.max == 0 {
		return
	}
	if len(p) >= c.max {
		copy(c.ring, p[len(p)-c.max:])
		c.pos, c.full = 0, true
		return
	}
	n := copy(c.ring[c.pos:], p)
	if n < len(p) {
		copy(c.ring, p[n:])
		c.full = true
	}
	c.pos = (c.pos + len(p)) % c.max
	if c.pos == 0 {
		c.full = true
	}
}

// tail returns the ring's content in write order.
func (c *capture) tail() []byte {
	if c.ring == nil {
		return nil
	}
	if !c.full {
		return append([]byte(nil), c.ring[:c.pos]...)
	}
	out := make([]byte, 0, c.max)
	out = append(out, c.ring[c.pos:]...)
	return append(out, c.ring[:c.pos]...)
}

// finish closes the spill file and fills out's output fields. A spill file
// that failed (disk full) is removed rather than handed out as whole; one
// that stopped at maxSpill is kept, and SpillBytes says how much it holds.
func (c *capture) finish(out *Output) {
	out.Combined = c.head
	out.TotalBytes = c.total
	out.Truncated = c.ring != nil
	out.OutputLimited = c.limited
	out.OutputLimit = max(c.maxSpill, 0)
	if out.Truncated {
		out.Tail = c.tail()
	}
	if c.spill == nil {
		return
	}
	name := c.spill.Name()
	err := c.spill.Close()
	if c.spillErr != nil || err != nil {
		os.Remove(name)
		return
	}
	out.SpillPath = name
	out.SpillBytes = c.spillBytes
}

// readAll copies r into c until EOF or a read error (the pipe closed under it).
func (c *capture) readAll(r io.Reader) {
	buf := make([]byte, 32*1024)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}
