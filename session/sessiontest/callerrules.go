package sessiontest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/session"
)

// callerRuleKeys are the (caller, action, rule) of rules, for comparing.
func callerRuleKeys(rules []session.CallerRule) []string {
	out := []string{}
	for _, r := range rules {
		out = append(out, r.Caller+" "+r.Action+" "+r.Rule)
	}
	return out
}

func mustAddCallerRule(t *testing.T, l session.Ledger, r *session.CallerRule) {
	t.Helper()
	ctx := t.Context()
	if err := l.AddCallerRule(ctx, r); err != nil {
		t.Fatalf("AddCallerRule of %q: %v", r.Caller[:min(len(r.Caller), 40)], err)
	}
}

func listCallerRules(t *testing.T, l session.Ledger, caller, dir string) []session.CallerRule {
	t.Helper()
	ctx := t.Context()
	rules, err := l.ListCallerRules(ctx, caller, dir)
	if err != nil {
		t.Fatalf("ListCallerRules %q %q: %v", caller, dir, err)
	}
	return rules
}

// testCallerRules: a caller's rules come back to that caller in that
// directory only (SPEC API-9), oldest first, as given, each once.
func testCallerRules(t *testing.T, l session.Ledger) {
	add := func(caller, dir, action, rule string, at time.Time) *session.CallerRule {
		r := &session.CallerRule{Caller: caller, Dir: dir, Action: action, Rule: rule, WorkspaceID: "w1", CreatedAt: at}
		mustAddCallerRule(t, l, r)
		return r
	}
	first := add("alice", "/src/a", "allow", "bash(git status)", t0.Add(time.Minute))
	add("alice", "/src/a", "allow", "edit_file(src/**)", t0)
	add("alice", "/src/a", "deny", "bash(rm:*)", t0.Add(2*time.Minute))
	add("bob", "/src/a", "allow", "bash(make:*)", t0)
	add("alice", "/src/b", "allow", "bash(ls)", t0)

	// The same rule again is no error and is kept once, with its first
	// time.
	add("alice", "/src/a", "allow", first.Rule, t0.Add(time.Hour))

	got := listCallerRules(t, l, "alice", "/src/a")
	want := []session.CallerRule{
		{Caller: "alice", Dir: "/src/a", Action: "allow", Rule: "edit_file(src/**)", WorkspaceID: "w1", CreatedAt: t0},
		{Caller: "alice", Dir: "/src/a", Action: "allow", Rule: "bash(git status)", WorkspaceID: "w1", CreatedAt: t0.Add(time.Minute)},
		{Caller: "alice", Dir: "/src/a", Action: "deny", Rule: "bash(rm:*)", WorkspaceID: "w1", CreatedAt: t0.Add(2 * time.Minute)},
	}
	if diff := cmp.Diff(want, got, Opts); diff != "" {
		t.Errorf("alice's rules in /src/a (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"bob allow bash(make:*)"}, callerRuleKeys(listCallerRules(t, l, "bob", "/src/a"))); diff != "" {
		t.Errorf("bob's rules in /src/a: another caller's leaked or went missing (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"alice allow bash(ls)"}, callerRuleKeys(listCallerRules(t, l, "alice", "/src/b"))); diff != "" {
		t.Errorf("alice's rules in /src/b (-want +got):\n%s", diff)
	}
	for _, k := range [][2]string{{"carol", "/src/a"}, {"alice", "/src"}, {"alice", "/src/a/sub"}, {"Alice", "/src/a"}} {
		if got := listCallerRules(t, l, k[0], k[1]); len(got) != 0 {
			t.Errorf("rules of %q in %q: %v, want none", k[0], k[1], callerRuleKeys(got))
		}
	}

	// Callers are a token's subject: any text, kept exactly.
	for _, caller := range []string{"user@example.com", "o'brien\"; DROP TABLE caller_rules; --", "ü ñ 日本", "%_*", "a/../../b"} {
		add(caller, "/src/a", "allow", "bash(pwd)", t0)
		if got := callerRuleKeys(listCallerRules(t, l, caller, "/src/a")); len(got) != 1 || got[0] != caller+" allow bash(pwd)" {
			t.Errorf("caller %q: rules %q, want its one rule", caller, got)
		}
	}
	if got := listCallerRules(t, l, "alice", "/src/a"); len(got) != 3 {
		t.Errorf("odd callers changed alice's rules: %v", callerRuleKeys(got))
	}

	// The longest fields allowed are stored (no index limit refuses them),
	// and two rules alike but for their last byte are two rules.
	// Random letters, which no compression shrinks below an index's limit.
	caller := noise(session.MaxCallerLen)
	dir := "/" + noise(session.MaxDirLen-1)
	long := "bash(" + noise(session.MaxRuleLen-8) + " 1)"
	add(caller, dir, "allow", long, t0)
	add(caller, dir, "allow", strings.TrimSuffix(long, "1)")+"2)", t0.Add(time.Second))
	if got := listCallerRules(t, l, caller, dir); len(got) != 2 || got[0].Rule != long {
		t.Errorf("the longest rules: %d back, want 2 (the first %d bytes long)", len(got), len(long))
	}
}

// testCallerRuleErrors: bad input is ErrInvalid and stores nothing.
func testCallerRuleErrors(t *testing.T, l session.Ledger) {
	ctx := t.Context()
	ok := session.CallerRule{Caller: "alice", Dir: "/src/a", Action: "allow", Rule: "bash(ls)"}
	with := func(f func(r *session.CallerRule)) *session.CallerRule {
		r := ok
		f(&r)
		return &r
	}
	bad := map[string]*session.CallerRule{
		"nil rule":              nil,
		"empty caller":          with(func(r *session.CallerRule) { r.Caller = "" }),
		"NUL in caller":         with(func(r *session.CallerRule) { r.Caller = "al\x00ice" }),
		"newline in caller":     with(func(r *session.CallerRule) { r.Caller = "alice\nbob" }),
		"caller not UTF-8":      with(func(r *session.CallerRule) { r.Caller = "al\xffice" }),
		"caller too long":       with(func(r *session.CallerRule) { r.Caller = strings.Repeat("a", session.MaxCallerLen+1) }),
		"dir too long":          with(func(r *session.CallerRule) { r.Dir = "/" + strings.Repeat("d", session.MaxDirLen) }),
		"empty dir":             with(func(r *session.CallerRule) { r.Dir = "" }),
		"relative dir":          with(func(r *session.CallerRule) { r.Dir = "src/a" }),
		"dir with ..":           with(func(r *session.CallerRule) { r.Dir = "/src/b/../a" }),
		"dir with a trailing /": with(func(r *session.CallerRule) { r.Dir = "/src/a/" }),
		"NUL in dir":            with(func(r *session.CallerRule) { r.Dir = "/src/a\x00" }),
		"empty rule":            with(func(r *session.CallerRule) { r.Rule = "" }),
		"NUL in rule":           with(func(r *session.CallerRule) { r.Rule = "bash(ls\x00)" }),
		"rule not UTF-8":        with(func(r *session.CallerRule) { r.Rule = "bash(l\xffs)" }),
		"rule too long":         with(func(r *session.CallerRule) { r.Rule = "bash(" + strings.Repeat("x", session.MaxRuleLen) + ")" }),
		"unknown action":        with(func(r *session.CallerRule) { r.Action = "maybe" }),
		"empty action":          with(func(r *session.CallerRule) { r.Action = "" }),
		"unsafe workspace id":   with(func(r *session.CallerRule) { r.WorkspaceID = "../w1" }),
	}
	for name, r := range bad {
		var before session.CallerRule
		if r != nil {
			before = *r
		}
		err := l.AddCallerRule(ctx, r)
		if !errors.Is(err, session.ErrInvalid) {
			t.Errorf("%s: AddCallerRule: %v, want ErrInvalid", name, err)
		}
		if r != nil && *r != before {
			t.Errorf("%s: a refused rule was changed: %+v", name, *r)
		}
	}
	if got := listCallerRules(t, l, "alice", "/src/a"); len(got) != 0 {
		t.Errorf("refused rules were stored: %v", callerRuleKeys(got))
	}
	for _, k := range [][2]string{{"", "/src/a"}, {"alice", ""}, {"alice", "src"}, {"alice", "/src/../a"}, {"al\x00ice", "/src/a"}} {
		if _, err := l.ListCallerRules(ctx, k[0], k[1]); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("ListCallerRules %q %q: %v, want ErrInvalid", k[0], k[1], err)
		}
	}
}

// testCallerRulesConcurrent: callers adding rules at once, the same ones
// too, keep each rule once.
func testCallerRulesConcurrent(t *testing.T, l session.Ledger) {
	ctx := t.Context()
	const workers, n = 6, 10
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for k := range n {
				for _, r := range []*session.CallerRule{
					{Caller: "shared", Dir: "/src", Action: "allow", Rule: fmt.Sprintf("bash(make %d)", k)},
					{Caller: fmt.Sprint("c", w), Dir: "/src", Action: "allow", Rule: fmt.Sprintf("bash(make %d)", k)},
				} {
					if err := l.AddCallerRule(ctx, r); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if got := listCallerRules(t, l, "shared", "/src"); len(got) != n {
		t.Errorf("shared caller: %d rules, want %d (each once)", len(got), n)
	}
	for w := range workers {
		if got := listCallerRules(t, l, fmt.Sprint("c", w), "/src"); len(got) != n {
			t.Errorf("c%d: %d rules, want %d", w, len(got), n)
		}
	}
}

// noise returns n pseudo-random letters, the same every run.
func noise(n int) string {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = 'a' + byte(x%26)
	}
	return string(b)
}
