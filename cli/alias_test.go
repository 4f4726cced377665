package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// COMPAT-1, PROV-3: `rein run --model sonnet` (issue 25) reaches the mock
// Anthropic server with the alias's model id; `[1m]` on a model of a
// smaller window sends the 1M beta flag; the user's config.yaml aliases
// override the table, and a workspace's cannot.
func TestCOMPAT1RunModelAlias(t *testing.T) {
	srv := mockserver.New()
	defer srv.Close()
	srv.Enqueue(mockserver.Turn{Text: "one"}, mockserver.Turn{Text: "two"}, mockserver.Turn{Text: "three"}, mockserver.Turn{Text: "four"})
	te := newTestEnv(t)
	te.env["ANTHROPIC_API_KEY"] = "k"
	te.env["ANTHROPIC_BASE_URL"] = srv.URL
	// A cloned repository tries to move sonnet to another model.
	te.write(".rein/models.yaml", "aliases:\n  sonnet: claude-opus-4-1\n  review: claude-opus-4-5\n")

	sent := func(i int) (model, beta string) {
		t.Helper()
		reqs := srv.Requests()
		if len(reqs) <= i {
			t.Fatalf("%d requests reached the server, want %d", len(reqs), i+1)
		}
		var body struct {
			Model string `json:"model"`
		}
		if err := json.Unmarshal(reqs[i].Body, &body); err != nil {
			t.Fatal(err)
		}
		return body.Model, reqs[i].Header.Get("anthropic-beta")
	}

	out, errs := te.mustRun(ExitOK, "run", "--model", "sonnet", "-o", "stream-json", "hi")
	if m, beta := sent(0); m != "claude-sonnet-5" || beta != "" {
		t.Errorf("--model sonnet sent model %q beta %q, want claude-sonnet-5 and no beta", m, beta)
	}
	if !strings.Contains(out+errs, "workspace alias sonnet") {
		t.Errorf("the workspace's redefinition is not reported:\n%s\n%s", out, errs)
	}
	te.mustRun(ExitOK, "run", "--model", "claude-sonnet-4-5[1m]", "-o", "json", "hi")
	if m, beta := sent(1); m != "claude-sonnet-4-5" || beta != "context-1m-2025-08-07" {
		t.Errorf("[1m] sent model %q beta %q", m, beta)
	}
	te.mustRun(ExitOK, "run", "--model", "review", "-o", "json", "hi")
	if m, _ := sent(2); m != "claude-opus-4-5" {
		t.Errorf("the workspace's new alias sent %q", m)
	}
	te.userFile("config.yaml", "aliases:\n  sonnet: claude-sonnet-4-5\n")
	te.mustRun(ExitOK, "run", "--model", "sonnet", "-o", "json", "hi")
	if m, _ := sent(3); m != "claude-sonnet-4-5" {
		t.Errorf("the user's alias sent %q, want claude-sonnet-4-5", m)
	}
	_, errs = te.mustRun(ExitError, "run", "--model", "inherit", "hi")
	if !strings.Contains(errs, "only as an agent's model") {
		t.Errorf("--model inherit: %s", errs)
	}
}

// COMPAT-1, AGENT-4: a Claude Code agent with `model: sonnet` (as
// Anthropic's own feature-dev agents have) runs its requests on the
// alias's model id; one with `model: inherit` on its parent's.
func TestCOMPAT1SubagentModelAlias(t *testing.T) {
	srv := mockserver.New()
	defer srv.Close()
	te := newTestEnv(t)
	te.env["ANTHROPIC_API_KEY"] = "k"
	te.env["ANTHROPIC_BASE_URL"] = srv.URL
	te.userFile("agents/explorer.md", agentFile("explorer", "Explores.", "model: sonnet\ntools: Read, Grep, Glob\n", "EXPLORER"))
	te.userFile("agents/helper.md", agentFile("helper", "Helps.", "model: inherit\n", "HELPER"))
	for _, sub := range []string{"explorer", "helper"} {
		srv.Reset()
		srv.Enqueue(mockserver.Turn{ToolCalls: []mockserver.ToolCall{{ID: "t1", Name: "task", Input: `{"agent":"` + sub + `","prompt":"look"}`}}},
			mockserver.Turn{Text: "found"}, mockserver.Turn{Text: "done"})
		te.mustRun(ExitOK, "run", "--model", "haiku", "-o", "json", "go")
		var models []string
		for _, r := range srv.Requests() {
			var body struct {
				Model string `json:"model"`
			}
			_ = json.Unmarshal(r.Body, &body)
			models = append(models, body.Model)
		}
		want := "claude-haiku-4-5,claude-sonnet-5,claude-haiku-4-5"
		if sub == "helper" {
			want = "claude-haiku-4-5,claude-haiku-4-5,claude-haiku-4-5"
		}
		if strings.Join(models, ",") != want {
			t.Errorf("%s: models sent %v, want %s", sub, models, want)
		}
	}
}

// COMPAT-1: what rein cannot honour of a Claude Code agent — an untrusted
// repository's included — is reported by rein doctor, not fatal.
func TestCOMPAT1DoctorReportsAgentFields(t *testing.T) {
	te := newTestEnv(t)
	te.write(".claude/agents/nb.md", agentFile("nb", "Edits notebooks.",
		"tools: Read, NotebookEdit, Bash(*)\npermissionMode: bypassPermissions\neffort: high\n", "NB"))
	_, out, _ := te.run("doctor")
	for _, want := range []string{"NotebookEdit is a Claude Code tool rein has no equivalent of",
		"asks for the bypass permission mode, which a workspace's agent may not have", "effort: an agent's reasoning effort is not supported"} {
		if !strings.Contains(out, want) {
			t.Errorf("rein doctor does not say %q:\n%s", want, out)
		}
	}
}
