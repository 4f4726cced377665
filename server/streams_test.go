package server

import (
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// API-2, issue 30: when a crowd of streams ends, the memory they held is
// given back once, returnDelay after half of them are gone, not for each
// stream nor for a few leaving; a later crowd leaving gives it back again.
func TestStreamCapsReturnMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newStreamCaps(-1, -1)
		var returns atomic.Int32
		c.returnMemory = func() { returns.Add(1) }
		open := func(n int) []func() {
			var rel []func()
			for i := range n {
				r, err := c.acquire(fmt.Sprint("caller", i%7))
				if err != nil {
					t.Fatal(err)
				}
				rel = append(rel, r)
			}
			return rel
		}
		rel := open(1000)
		for _, r := range rel[:400] { // fewer than half gone
			r()
		}
		time.Sleep(2 * returnDelay)
		if n := returns.Load(); n != 0 {
			t.Fatalf("%d returns with 600 of 1,000 streams open, want none", n)
		}
		for _, r := range rel[400:900] {
			r()
			r() // a release called twice counts once
		}
		if n := returns.Load(); n != 0 {
			t.Fatalf("%d returns before returnDelay, want none yet", n)
		}
		time.Sleep(returnDelay)
		synctest.Wait()
		if n := returns.Load(); n != 1 {
			t.Fatalf("%d returns after 900 of 1,000 streams ended, want 1", n)
		}
		// A few more leaving (fewer than returnMin) gives nothing back.
		for _, r := range rel[900:] {
			r()
		}
		time.Sleep(2 * returnDelay)
		if n := returns.Load(); n != 1 {
			t.Fatalf("%d returns after 100 more ended, want still 1", n)
		}
		// A new crowd comes and goes: one more return.
		rel = open(returnMin * 2)
		for _, r := range rel {
			r()
		}
		time.Sleep(2 * returnDelay)
		synctest.Wait()
		if n := returns.Load(); n != 2 {
			t.Fatalf("%d returns after a second crowd left, want 2", n)
		}
		if c.inAll != 0 || len(c.open) != 0 {
			t.Errorf("counts left: %d open, %v", c.inAll, c.open)
		}
	})
}
