package server_test

import (
	"bufio"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/server"
)

// API-2, issue 30: parked streams are written by a pool of GOMAXPROCS
// writers that never wait on a socket. Clients that stop reading — more of
// them than there are writers — do not hold back the others: these get
// every event while the slow ones' sockets are full and their streams
// still open (a writer waiting on one would have served the others only
// after the slow streams' write deadline ended them). Once the slow
// clients read again they get every event too, in order and once: a
// stream whose socket was full resumes where it stopped.
func TestEventsSlowClientsDoNotBlockOthers_API2(t *testing.T) {
	e := newEnvBus(t, eventbus.Options{Buffer: 1 << 13}, func(c *server.Config) {
		c.MaxStreamsPerCaller, c.MaxStreams = -1, -1
	})
	f := e.fixture(t, "ada")
	slow := make([]*stream, runtime.GOMAXPROCS(0)+2)
	for i := range slow {
		slow[i] = e.events(t, f.session, f.tok, "")
	}
	fast := make([]*stream, 2)
	for i := range fast {
		fast[i] = e.events(t, f.session, f.tok, "")
	}
	// 4,608 events of 1 KiB: 4.8 MB a client, more than a loopback
	// socket's buffers (tcp_wmem's 4 MiB at most, and what the unread
	// receiving side takes; TestRawSocket_API2 logs it).
	const n = 4608
	pad := strings.Repeat("x", 1<<10)
	for i := int64(1); i <= n; i++ {
		data := fmt.Sprintf(`{"type":"text_delta","text":"%d %s"}`, i, pad)
		if err := e.bus.Publish(bg, eventbus.Event{SessionID: f.session, ID: i, Type: "text_delta", Data: []byte(data)}); err != nil {
			t.Fatal(err)
		}
	}
	// Each group is read at once: a client waiting for the test to read
	// another would be a slow client too.
	readAll := func(who string, ss []*stream) {
		t.Helper()
		errs := make([]error, len(ss))
		var wg sync.WaitGroup
		for i, s := range ss {
			wg.Go(func() { errs[i] = readIDs(s.r, n, false) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s client %d: %v", who, i, err)
			}
		}
	}
	readAll("fast", fast)
	if got, want := e.bus.Subscribers(), len(slow)+len(fast); got != want {
		t.Fatalf("%d subscribers once the fast clients had every event, want %d: a slow client's stream ended first (a writer waited on its socket until the write deadline)", got, want)
	}
	readAll("slow", slow)
}

// API-2, issue 30: with many streams woken over and over while clients
// read at their own pace, every client gets every event of its session
// once, in order — the pool's queue and a stream's "woken again while
// stepping" never lose, repeat or reorder an event.
func TestEventsManyStreamsOrderAndNoLoss_API2(t *testing.T) {
	e := newEnvBus(t, eventbus.Options{Buffer: 1 << 14}, func(c *server.Config) {
		c.MaxStreamsPerCaller, c.MaxStreams = -1, -1
	})
	const clients, sessions, n = 40, 2, 3000
	fs := []fixture{e.fixture(t, "ada"), e.fixture(t, "bob")}
	type result struct {
		who string
		err error
	}
	results := make(chan result, clients)
	var wg sync.WaitGroup
	for i := range clients {
		f := fs[i%sessions]
		s := e.events(t, f.session, f.tok, "")
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- result{fmt.Sprint("client ", i), readIDs(s.r, n, i%4 == 0)}
		}()
	}
	for i := int64(1); i <= n; i++ {
		for _, f := range fs {
			data := fmt.Sprintf(`{"type":"text_delta","text":"%d"}`, i)
			if err := e.bus.Publish(bg, eventbus.Event{SessionID: f.session, ID: i, Type: "text_delta", Data: []byte(data)}); err != nil {
				t.Fatal(err)
			}
		}
		if i%7 == 0 {
			runtime.Gosched() // let streams step between bursts of different sizes
		}
	}
	wg.Wait()
	close(results)
	for r := range results {
		if r.err != nil {
			t.Errorf("%s: %v", r.who, r.err)
		}
	}
}

// readIDs reads n event frames and says how their ids differ from 1…n;
// a slow reader yields between frames.
func readIDs(r *bufio.Reader, n int, slow bool) error {
	want := int64(1)
	for want <= int64(n) {
		line, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("after id %d: %w", want-1, err)
		}
		v, ok := strings.CutPrefix(line, "id: ")
		if !ok {
			continue
		}
		id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || id != want {
			return fmt.Errorf("read id %q, want %d", v, want)
		}
		want++
		if slow {
			runtime.Gosched()
		}
	}
	return nil
}
