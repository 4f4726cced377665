// Command record-workspace records examples/workspace.cassette, the model
// half of rein's worked workspace example:
//
//	go run ./examples/record-workspace
//
// It trusts examples/workspace in a private HOME, then runs the real CLI
// (`rein run --cwd examples/workspace --record …`) from the repository's
// root against a scripted model that proofreads a page the way a model
// following the workspace's definitions would: it loads the proofread skill
// with the skill tool, reads the file the skill points to and the page,
// counts the page's words with the word_count action, looks its bold terms
// up with the glossary MCP server's define tool, hands the style review to
// the reviewer agent with the task tool (the agent's own model calls are
// part of the recording), and answers from what the tools returned. The
// tools really run, so the cassette's later requests hold their real
// output; after recording, the program replays the cassette once to check
// it. Re-record whenever the workspace's files, the built-in tools'
// descriptions or the recorded prompt change.
package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/reinhq/rein/cli"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/registry"
)

// Prompt is the recorded prompt; examples/workspace/README.md gives it.
const Prompt = "Proofread docs/beacon.md."

const (
	cassette  = "examples/workspace.cassette"
	workspace = "examples/workspace"
	page      = "docs/beacon.md"
)

func main() {
	if err := record(); err != nil {
		fmt.Fprintf(os.Stderr, "record-workspace: %v\n", err)
		os.Exit(1)
	}
}

func record() error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(root, workspace, "AGENTS.md")); err != nil {
		return fmt.Errorf("run me from the repository's root: %w", err)
	}
	env, err := goEnv()
	if err != nil {
		return err
	}
	home, err := os.MkdirTemp("", "rein-record-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	ctx := context.Background()
	if code := newApp(root, home, env, os.Stdout, os.Stderr, nil).Run(ctx, []string{"trust", workspace}); code != 0 {
		return fmt.Errorf("rein trust %s exited with %d", workspace, code)
	}
	model := llmtest.NewScripted(script()...)
	model.Name = "scripted"
	app := newApp(root, home, env, os.Stdout, os.Stderr, func(spec string) (cli.Model, bool, error) {
		if spec != "scripted/workspace" {
			return cli.Model{}, false, nil
		}
		return cli.Model{Provider: model, ProviderName: "scripted", Name: "workspace",
			Caps: registry.Model{Name: "workspace", Provider: "scripted", ContextWindow: 200_000, MaxOutput: 8192}}, true, nil
	})
	if code := app.Run(ctx, []string{"run", "--cwd", workspace, "--model", "scripted/workspace", "--record", cassette, "--verbose", Prompt}); code != 0 {
		return fmt.Errorf("the recording run exited with %d", code)
	}
	if model.Pending() != 0 {
		return fmt.Errorf("the run left %d scripted replies unplayed", model.Pending())
	}
	fmt.Fprintf(os.Stderr, "recorded %s; replaying it:\n", cassette)
	if code := newApp(root, home, env, os.Stdout, os.Stderr, nil).Run(ctx, []string{"run", "--cwd", workspace, "--model", "replay:" + cassette, Prompt}); code != 0 {
		return fmt.Errorf("the replay exited with %d", code)
	}
	return nil
}

// newApp is the CLI with a private HOME, so no user configuration leaks
// into the recording. env adds Go's own variables (goEnv): the glossary
// MCP server is started with go run, which must find the module and build
// caches the private HOME does not hold.
func newApp(root, home string, env map[string]string, stdout, stderr io.Writer, models func(string) (cli.Model, bool, error)) *cli.App {
	vars := map[string]string{"HOME": home, "PATH": os.Getenv("PATH")}
	for k, v := range env {
		vars[k] = v
	}
	return &cli.App{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Dir: root,
		Getenv: func(k string) string { return vars[k] }, Models: models}
}

// goVars are the Go settings examples/workspace/.rein/mcp.yaml passes to
// the glossary server.
var goVars = []string{"GOPATH", "GOMODCACHE", "GOCACHE", "GOFLAGS", "GOTOOLCHAIN"}

// goEnv returns Go's settings as `go env` resolves them in the real HOME.
func goEnv() (map[string]string, error) {
	out, err := osexec.Command("go", append([]string{"env"}, goVars...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w (the glossary MCP server is started with go run)", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(goVars) {
		return nil, fmt.Errorf("go env printed %d lines for %d variables", len(lines), len(goVars))
	}
	env := map[string]string{}
	for i, k := range goVars {
		if v := strings.TrimSpace(lines[i]); v != "" {
			env[k] = v
		}
	}
	return env, nil
}

// script is the scripted model's replies, in the order the requests come:
// five for the main agent, with the reviewer's two played while its task
// call runs.
func script() []llmtest.Reply {
	return []llmtest.Reply{
		{Text: "I'll load the proofread skill.", ToolCalls: []llm.ToolUse{
			llmtest.Call("call_skill", "skill", `{"name":"proofread"}`),
		}, Usage: llm.Usage{InputTokens: 3120, OutputTokens: 31}, Chunk: 12},
		{Func: readStyleAndPage},
		{Func: measure},
		{Func: delegate},
		{Func: reviewerRead},
		{Func: reviewerReport},
		{Func: answer},
	}
}

// readStyleAndPage follows the skill's first step: it reads the file the
// skill's instructions name, through the skill tool, and the page.
func readStyleAndPage(_ context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	body := resultOf(req, "call_skill")
	m := regexp.MustCompile("house style in `([^`]+)`").FindStringSubmatch(body)
	if m == nil {
		return failed(fmt.Errorf("the skill names no house-style file:\n%s", body))
	}
	text := fmt.Sprintf("The skill keeps its house style in %s; reading it and the page.", m[1])
	return reply(req, llm.StopToolUse, llm.Usage{InputTokens: 3590, OutputTokens: 58}, text,
		call("call_style", "skill", fmt.Sprintf(`{"name":"proofread","file":%q}`, m[1])),
		call("call_page", "read_file", fmt.Sprintf(`{"path":%q}`, page)))
}

var bold = regexp.MustCompile(`\*\*([^*]+)\*\*`)

// measure follows steps 2 and 3: the word_count action, and the glossary's
// define tool for each bold term of the page.
func measure(_ context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	content := stripNumbers(resultOf(req, "call_page"))
	terms := bold.FindAllStringSubmatch(strings.Join(strings.Fields(content), " "), -1)
	if len(terms) == 0 {
		return failed(fmt.Errorf("the page has no bold terms:\n%s", content))
	}
	calls := []*llm.ToolUse{call("call_count", "word_count", fmt.Sprintf(`{"path":%q}`, page))}
	for i, t := range terms {
		calls = append(calls, call(fmt.Sprintf("call_define_%d", i+1), "mcp__glossary__define", fmt.Sprintf(`{"term":%q}`, t[1])))
	}
	text := fmt.Sprintf("Counting the page's words and looking up its %d bold terms in the glossary.", len(terms))
	return reply(req, llm.StopToolUse, llm.Usage{InputTokens: 4410, OutputTokens: 96}, text, calls...)
}

var numbered = regexp.MustCompile(`(?m)^\d+\. .*$`)

// delegate follows step 4: the reviewer agent gets the page and the rules,
// in a task call alone in its reply (the agent's model calls come next).
func delegate(_ context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	rules := numbered.FindAllString(resultOf(req, "call_style"), -1)
	if len(rules) == 0 {
		return failed(fmt.Errorf("the house style has no numbered rules"))
	}
	prompt := fmt.Sprintf("Check the handbook page %s against the house-style rules below and report every problem "+
		"on a line of its own as path:line: problem (rule N). Rules 4 and 5 (length, glossary) are checked already.\n\n%s",
		page, strings.Join(rules, "\n"))
	input := fmt.Sprintf(`{"agent":"reviewer","description":"style review of %s","prompt":%q}`, page, prompt)
	return reply(req, llm.StopToolUse, llm.Usage{InputTokens: 4870, OutputTokens: 142},
		"Length and glossary are done; the reviewer agent checks the style rules.", call("call_review", "task", input))
}

// reviewerRead is the reviewer's first turn: it reads the page its prompt
// names.
func reviewerRead(_ context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	if len(req.Messages) != 1 || !strings.HasPrefix(req.Messages[0].TextOf(), "Check the handbook page") {
		return failed(fmt.Errorf("expected the reviewer's first request, got %d messages", len(req.Messages)))
	}
	return reply(req, llm.StopToolUse, llm.Usage{InputTokens: 2210, OutputTokens: 27}, "Reading the page.",
		call("call_review_page", "read_file", fmt.Sprintf(`{"path":%q}`, page)))
}

var (
	lineOf = regexp.MustCompile(`(?m)^ *(\d+)\t(.*)$`)
	digit  = regexp.MustCompile(`\b[1-9]\b`)
)

// reviewerReport checks the page's lines against rules 1 to 3 and reports.
func reviewerReport(_ context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	lines := lineOf.FindAllStringSubmatch(resultOf(req, "call_review_page"), -1)
	if len(lines) == 0 {
		return failed(fmt.Errorf("the reviewer read no lines"))
	}
	var found []string
	for _, l := range lines {
		if strings.Contains(strings.ToLower(l[2]), "lightkeeper") {
			found = append(found, fmt.Sprintf(`%s:%s: "lightkeeper": write "keeper" or "lighthouse keeper" (rule 1)`, page, l[1]))
		}
		for _, d := range digit.FindAllString(l[2], -1) {
			found = append(found, fmt.Sprintf(`%s:%s: "%s": spell out the numbers below ten (rule 2)`, page, l[1], d))
		}
	}
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last[2], "See also:") {
		found = append(found, fmt.Sprintf(`%s:%s: the page does not end with a "See also:" line (rule 3)`, page, last[1]))
	}
	text := "The page follows rules 1 to 3."
	if len(found) > 0 {
		text = strings.Join(found, "\n")
	}
	return reply(req, llm.StopEndTurn, llm.Usage{InputTokens: 2480, OutputTokens: 88}, text)
}

var wordLimit = regexp.MustCompile(`under (\d+) words`)

// answer writes the final answer from the tool results in the request.
func answer(_ context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	var b strings.Builder
	fmt.Fprintf(&b, "I proofread %s with the proofread skill and changed nothing.\n\n", page)
	limit := "the house style's limit"
	if m := wordLimit.FindStringSubmatch(resultOf(req, "call_style")); m != nil {
		limit = "the limit of " + m[1] + " words"
	}
	fmt.Fprintf(&b, "- **Length** (word_count): %s; %s is rule 4.\n", strings.TrimSpace(resultOf(req, "call_count")), limit)
	b.WriteString("- **Glossary** (rule 5): every bold term is defined:\n")
	for i := 1; ; i++ {
		def := resultOf(req, fmt.Sprintf("call_define_%d", i))
		if def == "" {
			break
		}
		fmt.Fprintf(&b, "  - %s\n", def)
	}
	b.WriteString("- **Style** (the reviewer agent):\n")
	for _, f := range strings.Split(strings.TrimSpace(resultOf(req, "call_review")), "\n") {
		fmt.Fprintf(&b, "  - %s\n", f)
	}
	return reply(req, llm.StopEndTurn, llm.Usage{InputTokens: 5630, OutputTokens: 187}, strings.TrimRight(b.String(), "\n"))
}

// resultOf returns the text of the tool result answering call id.
func resultOf(req *llm.Request, id string) string {
	for _, m := range req.Messages {
		for _, r := range m.ToolResults() {
			if r.ToolUseID == id {
				var b strings.Builder
				for _, c := range r.Content {
					if t, ok := c.(*llm.Text); ok {
						b.WriteString(t.Text)
					}
				}
				return b.String()
			}
		}
	}
	return ""
}

var lineNumber = regexp.MustCompile(`(?m)^ *\d+\t`)

// stripNumbers removes read_file's line numbers.
func stripNumbers(s string) string { return lineNumber.ReplaceAllString(s, "") }

func call(id, name, input string) *llm.ToolUse {
	return &llm.ToolUse{ID: id, Name: name, Input: []byte(input)}
}

// reply streams text, then the complete response with text and calls.
func reply(req *llm.Request, stop llm.StopReason, u llm.Usage, text string, calls ...*llm.ToolUse) iter.Seq2[llm.Delta, error] {
	msg := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.Text{Text: text}},
		Provider: "scripted", Model: req.Model}
	for _, c := range calls {
		msg.Content = append(msg.Content, c)
	}
	return func(yield func(llm.Delta, error) bool) {
		for _, w := range strings.SplitAfter(text, " ") {
			if !yield(llm.Delta{Kind: llm.DeltaText, Text: w}, nil) {
				return
			}
		}
		yield(llm.Delta{Kind: llm.DeltaDone, Response: &llm.Response{Message: msg, StopReason: stop, Usage: u}}, nil)
	}
}

func failed(err error) iter.Seq2[llm.Delta, error] {
	return func(yield func(llm.Delta, error) bool) { yield(llm.Delta{}, err) }
}
