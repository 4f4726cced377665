package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reinhq/rein/agent"
)

// Exit codes. A run's code follows its termination reason (SPEC LOOP-3).
const (
	ExitOK               = 0
	ExitError            = 1 // the run failed, or could not start (configuration, provider, session)
	ExitUsage            = 2 // bad flags or arguments
	ExitMaxTurns         = 3
	ExitPermissionDenied = 4
	ExitContextOverflow  = 5
	ExitTimeout          = 6
	ExitMaxTokens        = 7
	ExitRefusal          = 8
	ExitBudget           = 9
	ExitPlanReady        = 10  // plan mode: the run stopped at its plan, which waits for approval (PERM-7)
	ExitCancelled        = 130 // interrupted (Ctrl-C), as shells report SIGINT
)

// exitCodes maps each termination reason to its code, in the order the help
// lists them.
var exitCodes = []struct {
	reason agent.Reason
	code   int
	what   string
}{
	{agent.ReasonCompleted, ExitOK, "the run completed"},
	{agent.ReasonError, ExitError, "the run failed or could not start"},
	{"", ExitUsage, "usage error: bad flags or arguments"},
	{agent.ReasonMaxTurns, ExitMaxTurns, "stopped at --max-turns"},
	{agent.ReasonPermissionDenied, ExitPermissionDenied, "a permission denial ended the run"},
	{agent.ReasonContextOverflow, ExitContextOverflow, "the conversation no longer fits the context window"},
	{agent.ReasonTimeout, ExitTimeout, "the run's --timeout ran out"},
	{agent.ReasonMaxTokens, ExitMaxTokens, "the reply hit the output token limit"},
	{agent.ReasonRefusal, ExitRefusal, "the model refused"},
	{agent.ReasonBudget, ExitBudget, "the run's token or cost budget ran out"},
	{agent.ReasonPlanReady, ExitPlanReady, "plan mode: the run stopped at its plan (printed on stdout), which waits for approval"},
	{agent.ReasonCancelled, ExitCancelled, "cancelled (Ctrl-C, SIGTERM, or the terminal closed)"},
}

// exitCode returns the code of a termination reason.
func exitCode(r agent.Reason) int {
	for _, e := range exitCodes {
		if e.reason == r && r != "" {
			return e.code
		}
	}
	return ExitError
}

// exitCodeHelp is the exit-code table of `rein run --help`.
func exitCodeHelp() string {
	var b strings.Builder
	b.WriteString("Exit codes:\n")
	for _, e := range exitCodes {
		name := string(e.reason)
		if name == "" {
			name = "usage"
		}
		fmt.Fprintf(&b, "  %-4d %-18s %s\n", e.code, name, e.what)
	}
	b.WriteString("With --output-format json or stream-json, Claude Code's codes: 0 when the result's\n" +
		"subtype is success, 130 when cancelled, 1 otherwise (the result says why); usage errors stay 2.\n")
	return b.String()
}

// ccFinish turns the end of a run into the command's result under
// Claude Code's exit codes (--output-format json|stream-json): 0 for a
// success result (a plan waiting for approval included), 130 when
// cancelled, 1 for every error subtype. stderr still says why and what to
// do; stdout holds the result alone.
func ccFinish(done *agent.DoneEvent, sessionID string) error {
	switch {
	case done == nil:
		return fail(ExitError, "the run ended without a result")
	case ccSubtype(done.Reason) == ccSuccess:
		return nil
	case done.Reason == agent.ReasonCancelled:
		return &exitError{code: ExitCancelled, msg: endMessage(done, sessionID)}
	}
	return &exitError{code: ExitError, msg: endMessage(done, sessionID)}
}

// exitError ends a command with a code; msg, when set, is printed on
// stderr as "rein: msg".
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// fail returns an error that ends the command with code and a message.
func fail(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// failErr wraps err (an error from setting up) as a failure with code 1,
// keeping an exitError's own code.
func failErr(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee
	}
	return &exitError{code: ExitError, msg: err.Error()}
}
