package arch

import (
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

// httpFree are the core packages that must not link net/http, directly or
// through anything they import, each with why. They are what an embedder
// links to run an agent loop; speaking HTTP is the job of the packages at
// the edge: the model adapters (llm/anthropic, llm/openai, llm/gemini,
// llm/ollama and their shared llm/vendorhttp), the registry (OAuth
// refresh), tool/builtin (web_fetch, web_search), tool/mcptool (MCP over
// streamable HTTP), hook/httphook (HTTP hooks), telemetry (OTLP), api, client, server, gateway and the
// front ends. Those are not listed: they need net/http. Nor is exec: the
// sandbox's egress proxy (SPEC TOOL-7) runs its in-sandbox half there, and
// no core package imports exec (tool/builtin and runner do).
var httpFree = map[string]string{
	"llm":              "the conversation model, error kinds and retry policy every package imports; vendor HTTP is llm/vendorhttp's",
	"tokens":           "token counting is arithmetic on text",
	"tokens/llmtokens": "counts llm messages; no I/O",
	"tool":             "the Tool interface and its set; tools that fetch over HTTP live in tool/builtin and tool/mcptool",
	"permission":       "the policy engine decides on calls; it sends nothing",
	"session":          "the session model and Store interface; stores are files or databases",
	"session/jsonl":    "the file store of sessions",
	"memory":           "memory files on disk",
	"eventbus":         "the in-process event bus; the Redis bus is eventbus/redisbus",
	"kb":               "the knowledge base interface and its splitting; embeddings come through llm.Embedder",
	"hook":             "the hook registry and command hooks; HTTP hooks post through a hook.Poster, hook/httphook's",
	"agent":            "the agent loop; models, tools and hooks come through interfaces",
	"compact":          "compaction of a conversation through an llm.Provider",
}

// knownHTTP are the httpFree packages that link net/http today, each with
// what keeps it so. The test fails when one no longer does, so the list only
// shrinks.
var knownHTTP = map[string]string{}

// TestCoreHasNoHTTP keeps net/http out of the core (issue 23 item 5): no
// package of httpFree may reach it. A failure names the import chain, each
// package the one before it imports, so the link to cut is in plain view.
func TestCoreHasNoHTTP(t *testing.T) {
	g := importGraph(t)
	names := make([]string, 0, len(httpFree))
	for p := range httpFree {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		if _, ok := g[module+"/"+p]; !ok {
			t.Errorf("httpFree names %s, which is not a package of the module", p)
			continue
		}
		chain := importChain(g, module+"/"+p, "net/http")
		todo, known := knownHTTP[p]
		switch {
		case chain != nil && known:
			t.Logf("known: %s links net/http (%s): %s", p, todo, strings.Join(chain, " → "))
		case chain != nil:
			t.Errorf("%s links net/http: %s\n\t%s must not (%s); move the HTTP code to a package at the edge, as llm/vendorhttp is for the adapters",
				p, strings.Join(chain, " → "), p, httpFree[p])
		case known:
			t.Errorf("%s no longer links net/http: remove it from knownHTTP", p)
		}
	}
	for p := range knownHTTP {
		if _, ok := httpFree[p]; !ok {
			t.Errorf("knownHTTP names %s, which is not in httpFree", p)
		}
	}
}

// importGraph returns, for every package the module's packages reach
// (standard library included, tests excluded), the packages it imports,
// as go list -deps reports them. The module's own paths are shortened to
// their place in it.
func importGraph(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-e", "-deps", "-f",
		`{{.ImportPath}}|{{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	g := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		p, imports, ok := strings.Cut(line, "|")
		if !ok {
			t.Fatalf("go list: odd line %q", line)
		}
		g[p] = strings.Fields(imports)
	}
	return g
}

// importChain returns the shortest chain of imports from package from to
// package to in g, both ends included, with the module's prefix cut off its
// own packages; nil when from does not reach to. Of chains of one length it
// returns the first in the order of the import lists, so the message is the
// same run after run.
func importChain(g map[string][]string, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == to {
			var chain []string
			for q := p; q != ""; q = prev[q] {
				chain = append(chain, strings.TrimPrefix(q, module+"/"))
			}
			slices.Reverse(chain)
			return chain
		}
		for _, d := range g[p] {
			if _, seen := prev[d]; !seen {
				prev[d] = p
				queue = append(queue, d)
			}
		}
	}
	return nil
}

// TestImportChain checks the path finder the message relies on.
func TestImportChain(t *testing.T) {
	g := map[string][]string{
		module + "/agent": {"context", module + "/hook", module + "/llm"},
		module + "/hook":  {"bytes", "net/http"},
		module + "/llm":   {"context"},
		"net/http":        {"net", "context"},
		"net":             {"context"},
	}
	for _, c := range []struct {
		from, to string
		want     []string
	}{
		{module + "/agent", "net/http", []string{"agent", "hook", "net/http"}},
		{module + "/agent", "net", []string{"agent", "hook", "net/http", "net"}},
		{module + "/llm", "net/http", nil},
		{module + "/llm", module + "/llm", []string{"llm"}},
		{"absent", "net/http", nil},
	} {
		if got := importChain(g, c.from, c.to); !slices.Equal(got, c.want) {
			t.Errorf("importChain(%s, %s) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}
