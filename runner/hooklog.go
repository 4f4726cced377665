package runner

import (
	"context"
	"encoding/json"
	"os"
	"sync"

	"github.com/reinhq/rein/hook"
)

// lockedFile is where the hook runs of the bound session are audited: a
// JSON Lines file written from several goroutines, or another auditor (the
// server's ledger). While nothing is open it writes nothing.
type lockedFile struct {
	mu  sync.Mutex
	f   *os.File
	fwd hook.Auditor
}

func (l *lockedFile) open(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.f = f
	l.mu.Unlock()
	return nil
}

// set forwards records to a.
func (l *lockedFile) set(a hook.Auditor) {
	l.mu.Lock()
	l.fwd = a
	l.mu.Unlock()
}

func (l *lockedFile) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	l.fwd = nil
}

// write appends a hook record.
func (l *lockedFile) write(ctx context.Context, r hook.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fwd != nil {
		return l.fwd.Record(ctx, r)
	}
	if l.f == nil {
		return nil
	}
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = l.f.Write(append(line, '\n'))
	return err
}
