package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/sqlite"
)

// staleLedger returns kept rules as an older or newer rein may have
// stored them: rules this one's parser refuses.
type staleLedger struct {
	*session.MemLedger
	kept []session.CallerRule
}

func (l staleLedger) ListCallerRules(context.Context, string, string) ([]session.CallerRule, error) {
	return l.kept, nil
}

// A kept rule this rein cannot parse: an allow is left out with a note
// (leaving it out only narrows); an ask or a deny fails the run (leaving it
// out would widen).
func TestCallerRulesThatNoLongerParse_API9(t *testing.T) {
	good := session.CallerRule{Action: "allow", Rule: "bash(make:*)"}
	badAllow := session.CallerRule{Action: "allow", Rule: "bash(make"}
	badDeny := session.CallerRule{Action: "deny", Rule: "bash(rm"}

	var notes []string
	note := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
	s := &callerRuleStore{ledger: staleLedger{session.NewMemLedger(), []session.CallerRule{good, badAllow}}, caller: "bob", dir: "/src"}
	rules, err := s.load(context.Background(), note)
	if err != nil || len(rules) != 1 || rules[0].String() != "bash(make:*)" || rules[0].Source != permission.SourceCaller {
		t.Fatalf("load: %+v, %v; want the parsable rule, as a caller rule", rules, err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "bash(make") || !strings.Contains(notes[0], "next always answer") {
		t.Errorf("notes %q, want one naming the rule left out and what to do", notes)
	}

	s.ledger = staleLedger{session.NewMemLedger(), []session.CallerRule{good, badDeny}}
	if rules, err := s.load(context.Background(), note); err == nil || !strings.Contains(err.Error(), "bash(rm") {
		t.Errorf("load with an unparsable deny: %+v, %v; want an error naming it", rules, err)
	}
}

// An "always" answer is kept even when the run is being cancelled: the
// caller did answer.
func TestCallerRuleKeptWhenCancelled_API9(t *testing.T) {
	l := session.NewMemLedger()
	s := &callerRuleStore{ledger: l, caller: "bob", dir: "/src", workspaceID: "w1"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Add(ctx, permission.Rule{Action: "allow", Tool: "bash", Pattern: "make:*"}); err != nil {
		t.Fatal(err)
	}
	kept, err := l.ListCallerRules(context.Background(), "bob", "/src")
	if err != nil || len(kept) != 1 || kept[0].Rule != "bash(make:*)" || kept[0].WorkspaceID != "w1" {
		t.Errorf("kept %+v, %v", kept, err)
	}
	if err := s.Add(context.Background(), permission.Rule{Action: "allow", Tool: "bash", Pattern: "make"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(context.Background(), permission.Rule{Action: "allow", Tool: "ba sh"}); err == nil {
		t.Error("a malformed rule was kept")
	}
}

// BenchmarkCallerRulesLoad is what a server run pays at its start for its
// caller's rules (SPEC API-9): SQLite's indexed range of 20 rules among
// 10,000 and parsing them into the policy's rules.
func BenchmarkCallerRulesLoad(b *testing.B) {
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "rein.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for c := range 500 {
		s := &callerRuleStore{ledger: st, caller: fmt.Sprint("caller", c), dir: fmt.Sprint("/srv/project", c%7)}
		for k := range 20 {
			if err := s.Add(ctx, permission.Rule{Action: "allow", Tool: "bash", Pattern: fmt.Sprintf("make target%d:*", k)}); err != nil {
				b.Fatal(err)
			}
		}
	}
	s := &callerRuleStore{ledger: st, caller: "caller42", dir: "/srv/project0"}
	b.ReportAllocs()
	for b.Loop() {
		rules, err := s.load(ctx, func(string, ...any) {})
		if err != nil || len(rules) != 20 {
			b.Fatalf("%d rules, %v", len(rules), err)
		}
	}
}
