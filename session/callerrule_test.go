package session_test

import (
	"errors"
	"testing"
	"time"

	"github.com/reinhq/rein/session"
)

// FuzzPrepareCallerRule: whatever a caller rule holds, PrepareCallerRule
// either refuses it with ErrInvalid, leaving it as it was, or keeps it as
// given but for its time, and keeps it so again.
func FuzzPrepareCallerRule(f *testing.F) {
	f.Add("alice", "/src/a", "allow", "Bash(git status)")
	f.Add("o'brien\"; --", "/src/a", "deny", " bash( rm:* ) ")
	f.Add("", "/src", "allow", "bash")
	f.Add("bob", "src", "allow", "edit_file(src/**)")
	f.Add("bob", "/a/../b", "ask", "read_file([)")
	f.Add("bob", "/a", "allow", "Action(deploy_*)")
	f.Add("b\x00b", "/a\x00", "allow", "bash(ls\x00)")
	f.Add("bob", "/a", "maybe", "web_fetch(domain:example.com)")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, caller, dir, action, rule string) {
		r := &session.CallerRule{Caller: caller, Dir: dir, Action: action, Rule: rule}
		before := *r
		if err := session.PrepareCallerRule(r, at); err != nil {
			if !errors.Is(err, session.ErrInvalid) {
				t.Fatalf("refused with %v, want ErrInvalid", err)
			}
			if *r != before {
				t.Fatalf("a refused rule was changed: %+v, was %+v", *r, before)
			}
			return
		}
		if r.CreatedAt != at || r.Caller != caller || r.Dir != dir || r.Action != action || r.Rule != rule {
			t.Fatalf("kept %+v: a field changed", *r)
		}
		if action != "allow" && action != "ask" && action != "deny" {
			t.Fatalf("kept the action %q", action)
		}
		again := *r
		if err := session.PrepareCallerRule(&again, at); err != nil || again != *r {
			t.Fatalf("the kept rule %+v does not prepare to itself: %+v, %v", *r, again, err)
		}
	})
}
