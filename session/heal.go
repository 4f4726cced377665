package session

import (
	"fmt"
	"strings"

	"github.com/reinhq/rein/llm"
)

// The texts of the results [Heal] gives to calls that have none. All are
// marked is_error. They say what is known and no more: "rein stopped" is
// about rein's own process; what became of a process group a call started
// is told by [ProcessText], from the group's state when the session is
// loaded.
const (
	// InterruptedText answers a call when no journal says whether it started.
	InterruptedText = "interrupted: rein stopped before this call finished (no journal says whether it started or started a process); it may have had side effects — check before repeating it"
	// StartedText answers a call the journal shows started, with no process
	// group recorded.
	StartedText = "interrupted: the call started but rein stopped before it finished; it may have had side effects — check before repeating it"
	// NotRunText answers a call the journal shows never started.
	NotRunText = "not run: rein stopped before this call started; call it again if it is still needed"
)

// processPrefix starts every [ProcessText]; Load recognises a stored one by
// it and restates it when the group's state has changed.
const processPrefix = "interrupted: rein stopped before this call finished; the command it started (process group "

// legacyStartedText is what StartedText said before process groups were
// reported; a stored repair holding it is restated too.
const legacyStartedText = "interrupted: the call started but did not finish (the process was stopped); it may have had side effects — check before repeating it"

// ProcessText is the result healing gives a call whose journal recorded the
// process group pgid (SPEC SESS-1, SESS-2), from that group's state: alive
// says it still has a live member. A running command must not be started
// again; a gone one may have done part of its work.
func ProcessText(pgid int, alive bool) string {
	if alive {
		return fmt.Sprintf("%s%d) is STILL RUNNING — do not start it again; wait for it to finish, "+
			"or stop it (kill -TERM -- -%d) before repeating it; its output will not be returned here", processPrefix, pgid, pgid)
	}
	return fmt.Sprintf("%s%d)%s", processPrefix, pgid, goneSuffix)
}

// goneSuffix ends the [ProcessText] of a group that no longer runs.
const goneSuffix = " is no longer running: it finished or was stopped, and its output was lost; " +
	"it may have had side effects — check before repeating it"

// stoppedSuffix ends the [StoppedText] of a group.
const stoppedSuffix = " was still running after the crash and rein stopped it (SIGTERM, then SIGKILL) when the session was resumed; " +
	"its output was lost and it may have done part of its work — check before repeating it"

// StoppedText is the result healing gives a call whose process group rein
// stopped after a crash ([StopPending], `--kill-orphans`; SPEC SESS-1): the
// command is not running any more because rein ended it, not because it
// finished.
func StoppedText(pgid int) string {
	return fmt.Sprintf("%s%d)%s", processPrefix, pgid, stoppedSuffix)
}

// keepsStopped reports whether a stored text saying rein stopped a group
// stays when the group's state is restated as want: a stopped group is gone
// for good, and "stopped" says more than "finished or was stopped".
func keepsStopped(text, want string) bool {
	return strings.HasSuffix(text, stoppedSuffix) && strings.HasSuffix(want, goneSuffix)
}

// isProcessText reports whether text is a result healing wrote about a
// process group (or an older text that did not say), one [Load] restates.
func isProcessText(text string) bool {
	return strings.HasPrefix(text, processPrefix) || text == legacyStartedText
}

// Report says what healing fixed. The zero value means nothing was wrong.
type Report struct {
	// Interrupted lists the calls that had no result and were given one
	// saying they may have had side effects.
	Interrupted []string `json:"interrupted,omitempty"`
	// NotRun lists the calls that had no result and, by the journal, never
	// started.
	NotRun []string `json:"not_run,omitempty"`
	// Reordered lists the calls whose results were put back in declaration
	// order.
	Reordered []string `json:"reordered,omitempty"`
	// Orphans lists the results dropped because no call right before them
	// has their id.
	Orphans []string `json:"orphans,omitempty"`
	// Duplicates lists the results dropped because their call already had
	// one.
	Duplicates []string `json:"duplicates,omitempty"`
	// DuplicateCalls lists the calls dropped because their message already
	// declared a call with the same id.
	DuplicateCalls []string `json:"duplicate_calls,omitempty"`
	// BadBlocks counts the blocks dropped for being where they cannot be:
	// tool calls outside assistant messages, results outside user messages,
	// nil blocks.
	BadBlocks int `json:"bad_blocks,omitempty"`
	// EmptyDropped counts the messages dropped because they held nothing
	// (an assistant message with no text, image or call; a message with no
	// block left).
	EmptyDropped int `json:"empty_dropped,omitempty"`
	// Merged counts the user messages merged into the one before them so
	// that results follow their calls.
	Merged int `json:"merged,omitempty"`
	// Damaged lists the records the store could not read and skipped (set
	// by [Load], never by [Heal]).
	Damaged []Damage `json:"damaged,omitempty"`
}

// Damage describes a record a store could not read.
type Damage struct {
	// Line is the record's 1-based number in the store's file, when it has
	// lines; Offset its byte offset; Bytes its length.
	Line   int64 `json:"line,omitempty"`
	Offset int64 `json:"offset"`
	Bytes  int64 `json:"bytes"`
	// Reason says what was wrong: "torn last line", "corrupt: …".
	Reason string `json:"reason"`
}

// Changed reports whether healing changed the messages.
func (r *Report) Changed() bool {
	return len(r.Interrupted)+len(r.NotRun)+len(r.Reordered)+len(r.Orphans)+len(r.Duplicates)+
		len(r.DuplicateCalls)+r.BadBlocks+r.EmptyDropped+r.Merged > 0
}

// Empty reports whether there is nothing in the report.
func (r *Report) Empty() bool { return !r.Changed() && len(r.Damaged) == 0 }

// String summarises the report in one line, "" when it is empty.
func (r *Report) String() string {
	var parts []string
	ids := func(what string, list []string) {
		if len(list) > 0 {
			parts = append(parts, fmt.Sprintf("%d %s (%s)", len(list), what, strings.Join(list, ", ")))
		}
	}
	count := func(what string, n int) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	ids("interrupted call(s)", r.Interrupted)
	ids("call(s) not run", r.NotRun)
	ids("result(s) reordered", r.Reordered)
	ids("orphan result(s) dropped", r.Orphans)
	ids("duplicate result(s) dropped", r.Duplicates)
	ids("duplicate call(s) dropped", r.DuplicateCalls)
	count("misplaced block(s) dropped", r.BadBlocks)
	count("empty message(s) dropped", r.EmptyDropped)
	count("message(s) merged", r.Merged)
	for _, d := range r.Damaged {
		parts = append(parts, fmt.Sprintf("damaged record at line %d skipped (%s, %d bytes)", d.Line, d.Reason, d.Bytes))
	}
	return strings.Join(parts, "; ")
}

// FinishedText is the result healing gives a call that finished before a
// crash lost the message holding its result: its journaled output.
func FinishedText(end *ToolEnd) string {
	status := "succeeded"
	if end.IsError {
		status = "failed (" + end.Outcome + ")"
	}
	return "recovered after a crash: the call " + status + " before rein stopped; its output was:\n" + end.Output
}

// Heal repairs a conversation so it satisfies the pairing invariant
// (llm.CheckPairing, SPEC LOOP-5, SESS-2), and reports what it fixed. It is
// pure (msgs is not modified; unchanged messages are shared) and idempotent:
// healing its result changes nothing and reports nothing.
//
// Tool calls outside assistant messages and results outside user messages
// are dropped, then empty messages, then repeated call ids within a message.
// Each assistant message with calls must be followed by a user message
// holding one result per call in declaration order: results scattered over
// the user messages that follow it are merged into the first of them;
// results are put in order; duplicate results and results answering no call
// right before them are dropped; a call with no result gets one marked
// is_error. Its text depends on interrupted, the journal of calls that
// started: when interrupted is nil (no journal) it is [InterruptedText];
// for a call in interrupted the map's text, or [StartedText] when empty;
// for a call not in a non-nil map, [NotRunText].
func Heal(msgs []llm.Message, interrupted map[string]string) ([]llm.Message, Report) {
	var rep Report
	clean := cleanMessages(msgs, &rep)
	out := make([]llm.Message, 0, len(clean)+1)
	for i := 0; i < len(clean); {
		m := clean[i]
		i++
		if m.Role == llm.RoleUser && hasResults(m) {
			// Results not consumed by the calls before them answer nothing.
			if m = dropResults(m, &rep); len(m.Content) == 0 {
				rep.EmptyDropped++
				continue
			}
		}
		out = append(out, m)
		if m.Role != llm.RoleAssistant {
			continue
		}
		calls := m.ToolUses()
		if len(calls) == 0 {
			continue
		}
		end := i
		for end < len(clean) && clean[end].Role == llm.RoleUser {
			end++
		}
		last := -1
		for t := i; t < end; t++ {
			if answers(clean[t], calls) {
				last = t
			}
		}
		if last < 0 {
			out = append(out, pairResults(calls, nil, interrupted, &rep))
			continue
		}
		out = append(out, pairResults(calls, clean[i:last+1], interrupted, &rep))
		i = last + 1
	}
	return out, rep
}

// cleanMessages drops misplaced and nil blocks, repeated call ids, and empty
// messages.
func cleanMessages(msgs []llm.Message, rep *Report) []llm.Message {
	out := make([]llm.Message, 0, len(msgs))
	for _, m := range msgs {
		if needsCleaning(m) {
			m = cleanBlocks(m, rep)
		}
		if isEmpty(m) {
			rep.EmptyDropped++
			continue
		}
		out = append(out, m)
	}
	return out
}

// needsCleaning reports whether m holds a block [cleanBlocks] would drop.
func needsCleaning(m llm.Message) bool {
	var ids []string
	for _, b := range m.Content {
		switch b := b.(type) {
		case nil:
			return true
		case *llm.ToolUse:
			if m.Role != llm.RoleAssistant {
				return true
			}
			for _, id := range ids {
				if id == b.ID {
					return true
				}
			}
			ids = append(ids, b.ID)
		case *llm.ToolResult:
			if m.Role != llm.RoleUser {
				return true
			}
		}
	}
	return false
}

func cleanBlocks(m llm.Message, rep *Report) llm.Message {
	keep := make([]llm.Block, 0, len(m.Content))
	seen := map[string]bool{}
	for _, b := range m.Content {
		switch b := b.(type) {
		case nil:
			rep.BadBlocks++
			continue
		case *llm.ToolUse:
			if m.Role != llm.RoleAssistant {
				rep.BadBlocks++
				continue
			}
			if seen[b.ID] {
				rep.DuplicateCalls = append(rep.DuplicateCalls, b.ID)
				continue
			}
			seen[b.ID] = true
		case *llm.ToolResult:
			if m.Role != llm.RoleUser {
				rep.BadBlocks++
				continue
			}
		}
		keep = append(keep, b)
	}
	m.Content = keep
	return m
}

// isEmpty reports a message with nothing to send: for an assistant message,
// nothing a reader would see (as the run loop judges a reply, LOOP-10); for
// any other, no block.
func isEmpty(m llm.Message) bool {
	if m.Role != llm.RoleAssistant {
		return len(m.Content) == 0
	}
	return m.Empty()
}

func hasResults(m llm.Message) bool {
	for _, b := range m.Content {
		if _, ok := b.(*llm.ToolResult); ok {
			return true
		}
	}
	return false
}

// dropResults removes the results of a user message that follows no call.
func dropResults(m llm.Message, rep *Report) llm.Message {
	keep := make([]llm.Block, 0, len(m.Content))
	for _, b := range m.Content {
		if r, ok := b.(*llm.ToolResult); ok {
			rep.Orphans = append(rep.Orphans, r.ToolUseID)
			continue
		}
		keep = append(keep, b)
	}
	m.Content = keep
	return m
}

// pairResults builds the user message answering calls from the results in
// group (the user messages that follow them, up to the last holding one of
// their results). A group of one message that is already right is returned
// as it is.
func pairResults(calls []*llm.ToolUse, group []llm.Message, interrupted map[string]string, rep *Report) llm.Message {
	found := make([]*llm.ToolResult, len(calls))
	var others []llm.Block
	var orphans, dups []string
	inOrder, prev := true, -1
	for _, m := range group {
		for _, b := range m.Content {
			r, ok := b.(*llm.ToolResult)
			if !ok {
				others = append(others, b)
				continue
			}
			k := callIndex(calls, r.ToolUseID)
			switch {
			case k < 0:
				orphans = append(orphans, r.ToolUseID)
			case found[k] != nil:
				dups = append(dups, r.ToolUseID)
			default:
				found[k] = r
				inOrder = inOrder && k > prev
				prev = k
			}
		}
	}
	complete := true
	for _, r := range found {
		complete = complete && r != nil
	}
	if len(group) == 1 && complete && inOrder && len(orphans)+len(dups) == 0 {
		return group[0]
	}
	rep.Orphans = append(rep.Orphans, orphans...)
	rep.Duplicates = append(rep.Duplicates, dups...)
	if len(group) > 1 {
		rep.Merged += len(group) - 1
	}
	content := make([]llm.Block, 0, len(calls)+len(others))
	for k, c := range calls {
		r := found[k]
		switch {
		case r == nil:
			r = synthesise(c.ID, interrupted, rep)
		case !inOrder:
			rep.Reordered = append(rep.Reordered, c.ID)
		}
		content = append(content, r)
	}
	return llm.Message{Role: llm.RoleUser, Content: append(content, others...)}
}

func callIndex(calls []*llm.ToolUse, id string) int {
	for k, c := range calls {
		if c.ID == id {
			return k
		}
	}
	return -1
}

// synthesise returns the result of a call that has none.
func synthesise(id string, interrupted map[string]string, rep *Report) *llm.ToolResult {
	text := InterruptedText
	switch journal, started := interrupted[id]; {
	case interrupted == nil:
		rep.Interrupted = append(rep.Interrupted, id)
	case !started:
		text = NotRunText
		rep.NotRun = append(rep.NotRun, id)
	default:
		text = StartedText
		if journal != "" {
			text = journal
		}
		rep.Interrupted = append(rep.Interrupted, id)
	}
	return &llm.ToolResult{ToolUseID: id, Content: []llm.Block{&llm.Text{Text: text}}, IsError: true}
}
