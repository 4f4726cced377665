package server

import (
	"runtime"
	"sync"

	"github.com/reinhq/rein/eventbus"
)

// writerPool steps the parked streams that are due (see parkedStream) on
// at most GOMAXPROCS goroutines, which take them in the order they became
// due. A goroutine is started when a stream becomes due and fewer are
// running, and ends when none is left: an idle server runs none.
//
// Issue 30: a goroutine a wake made one event to 1,000 clients start
// 1,000 goroutines at once, each with a fresh stack, queued behind each
// other in the scheduler; every goroutine that ever ran leaves its `g`
// behind. A stream in the pool is written without waiting (rawSocket): a
// client whose socket is full gets a goroutine of its own for the rest
// (parkedStream.resume), so one slow client never holds a writer that
// other streams wait for.
//
// Its zero value is ready; it is safe for concurrent use.
type writerPool struct {
	mu      sync.Mutex
	due     []*parkedStream // due[head:] wait, oldest first
	head    int
	running int
}

// maxKeptDue is the largest queue the pool keeps once it is empty; a
// larger one (a crowd's) is left to the collector.
const maxKeptDue = 1024

// submit queues p to be stepped; p must not be queued or stepping.
func (w *writerPool) submit(p *parkedStream) {
	w.mu.Lock()
	if w.head >= 64 && w.head*2 >= len(w.due) { // a queue that never empties does not grow
		n := copy(w.due, w.due[w.head:])
		clear(w.due[n:])
		w.due, w.head = w.due[:n], 0
	}
	w.due = append(w.due, p)
	start := w.running < runtime.GOMAXPROCS(0)
	if start {
		w.running++
	}
	w.mu.Unlock()
	if start {
		go w.work()
	}
}

// work steps the due streams until none is left. The events each step
// takes go through one slice of the writer's (issue 30: a slice a step
// was an allocation a client an event).
func (w *writerPool) work() {
	var taken []*eventbus.Event
	for {
		w.mu.Lock()
		if w.head == len(w.due) {
			w.running--
			clear(w.due)
			w.due, w.head = w.due[:0], 0
			if cap(w.due) > maxKeptDue {
				w.due = nil
			}
			w.mu.Unlock()
			return
		}
		p := w.due[w.head]
		w.due[w.head] = nil
		w.head++
		w.mu.Unlock()
		p.run(false, &taken)
	}
}
