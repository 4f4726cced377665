package jsonl

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
)

// heldSync is a directory fsync that waits for release, then returns err.
type heldSync struct {
	release chan struct{}
	err     error
	calls   int
}

func (h *heldSync) sync(dir string) error {
	h.calls++
	<-h.release
	if h.err != nil {
		return h.err
	}
	return syncDir(dir)
}

func userEntry(text string) session.Entry {
	m := llm.UserText(text)
	return session.Entry{Kind: session.KindMessage, Time: time.Now(), Message: &m}
}

// SESS-1, CLI-1 (issue 30): Create returns before its directory fsync has
// run, and taking the lock does not wait for it; the session's first
// Append does, so the entry is reported durable only once the session's
// names are too.
func TestCreateSyncsBesideCaller_SESS1(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, err := New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		held := &heldSync{release: make(chan struct{})}
		s.syncDir = held.sync
		if err := s.Create(ctx, &session.Session{ID: "s"}); err != nil { // returns while the fsync is held
			t.Fatal(err)
		}
		if err := s.Acquire("s"); err != nil {
			t.Fatal(err)
		}
		appended := make(chan error, 1)
		go func() {
			_, err := s.Append(ctx, "s", userEntry("hello"))
			appended <- err
		}()
		synctest.Wait()
		select {
		case err := <-appended:
			t.Fatalf("Append returned (err %v) before the directory of the new session was fsynced", err)
		default:
		}
		close(held.release)
		if err := <-appended; err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, "s", userEntry("again")); err != nil { // waits for nothing now
			t.Fatal(err)
		}
		if held.calls != 1 {
			t.Errorf("%d fsyncs of the directory by Create, want 1", held.calls)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// A failed directory fsync fails the session's first write, which leaves
// nothing behind: the next Append numbers its entry 1.
func TestCreateSyncFailureFailsFirstWrite_SESS1(t *testing.T) {
	ctx := context.Background()
	s, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	held := &heldSync{release: make(chan struct{}), err: errors.New("input/output error")}
	close(held.release)
	s.syncDir = held.sync
	if err := s.Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Append(ctx, "s", userEntry("hello"))
	if err == nil || !strings.Contains(err.Error(), "fsync of the directory: input/output error") {
		t.Fatalf("Append after a failed directory fsync: %v", err)
	}
	last, err := s.Append(ctx, "s", userEntry("hello again"))
	if err != nil || last != 1 {
		t.Fatalf("the next Append: last seq %d, %v; want 1, nil", last, err)
	}
	var texts []string
	for e, err := range s.Entries(ctx, "s", 0) {
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, e.Message.TextOf())
	}
	if len(texts) != 1 || texts[0] != "hello again" {
		t.Errorf("log after the failed Append: %q", texts)
	}
	// Release and Close wait for (and report) a fsync still pending.
	held2 := &heldSync{release: make(chan struct{}), err: errors.New("disk gone")}
	close(held2.release)
	s.syncDir = held2.sync
	if err := s.Create(ctx, &session.Session{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Release("t"); err == nil || !strings.Contains(err.Error(), "disk gone") {
		t.Errorf("Release after a failed directory fsync: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
