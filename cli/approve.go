package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/reinhq/rein/permission"
)

// lineApprover asks permission questions (SPEC PERM-3) and ask_user
// questions on a terminal, one line each, for rein run. Lines are read by
// one goroutine, so a question abandoned by a timeout does not steal the
// answer to the next.
type lineApprover struct {
	out   io.Writer
	lines chan string
	once  sync.Once
	in    io.Reader
}

func newLineApprover(in io.Reader, out io.Writer) *lineApprover {
	return &lineApprover{in: in, out: out, lines: make(chan string)}
}

// readLine returns the next line typed, or ctx's error.
func (a *lineApprover) readLine(ctx context.Context) (string, error) {
	a.once.Do(func() {
		go func() {
			sc := bufio.NewScanner(a.in)
			for sc.Scan() {
				a.lines <- sc.Text()
			}
			close(a.lines)
		}()
	})
	select {
	case l, ok := <-a.lines:
		if !ok {
			return "", io.EOF
		}
		return strings.TrimSpace(l), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Approve implements permission.Approver.
func (a *lineApprover) Approve(ctx context.Context, p permission.Prompt) (permission.Verdict, error) {
	if permission.IsPlanApproval(p.Request) {
		return a.approvePlan(ctx, p)
	}
	what := inputSummary(p.Request.Input)
	who := p.Request.Tool
	if p.Request.Agent != "" {
		who = "agent " + p.Request.Agent + ": " + who
	}
	fmt.Fprintf(a.out, "\n%s wants to run: %s\n", who, clip(what, 200))
	if p.Reason != "" {
		fmt.Fprintf(a.out, "  (%s)\n", p.Reason)
	}
	always := ""
	if len(p.Suggested) > 0 {
		rules := make([]string, 0, len(p.Suggested))
		for _, r := range p.Suggested {
			rules = append(rules, r.String())
		}
		always = fmt.Sprintf(", [a]lways allow %s", strings.Join(rules, ", "))
	}
	fmt.Fprintf(a.out, "Allow? [y]es%s, [N]o: ", always)
	line, err := a.readLine(ctx)
	if err != nil {
		fmt.Fprintln(a.out)
		return permission.Verdict{Answer: permission.AnswerDeny}, err
	}
	switch strings.ToLower(line) {
	case "y", "yes":
		return permission.Verdict{Answer: permission.AnswerOnce}, nil
	case "a", "always":
		if always != "" {
			return permission.Verdict{Answer: permission.AnswerAlways}, nil
		}
		return permission.Verdict{Answer: permission.AnswerOnce}, nil
	}
	return permission.Verdict{Answer: permission.AnswerDeny, Message: "the user declined"}, nil
}

// Ask implements builtin.Asker for ask_user.
func (a *lineApprover) Ask(ctx context.Context, question string, options []string) (string, error) {
	fmt.Fprintf(a.out, "\n%s\n", question)
	for i, o := range options {
		fmt.Fprintf(a.out, "  %d. %s\n", i+1, o)
	}
	fmt.Fprint(a.out, "> ")
	line, err := a.readLine(ctx)
	if err != nil {
		return "", err
	}
	var n int
	if _, err := fmt.Sscanf(line, "%d", &n); err == nil && n >= 1 && n <= len(options) && fmt.Sprint(n) == line {
		return options[n-1], nil
	}
	return line, nil
}
