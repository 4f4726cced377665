// Package arch holds the tests that keep the package layout of
// docs/architecture.md ("Layers and arrows") true — which packages may
// reach which, directly or through others — and the documents themselves
// in step with the code (docs_test.go).
package arch

import (
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/reinhq/rein"

// pkg is one package of the module as go list sees it, paths relative to
// the module for its own packages.
type pkg struct {
	imports []string // direct, non-test
	deps    []string // transitive, non-test (what go list -deps walks)
}

// packages returns each package of the module with its direct imports and
// its transitive dependencies (go list's Deps: the closure `go list -deps`
// prints), test files excluded.
func packages(t *testing.T) map[string]pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-e", "-f",
		`{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rel := func(list string) []string {
		f := strings.Fields(list)
		for i, p := range f {
			if p == module {
				f[i] = "."
			} else {
				f[i] = strings.TrimPrefix(p, module+"/")
			}
		}
		return f
	}
	m := map[string]pkg{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "|", 3)
		if len(f) != 3 {
			t.Fatalf("go list: odd line %q", line)
		}
		m[strings.TrimPrefix(f[0], module+"/")] = pkg{imports: rel(f[1]), deps: rel(f[2])}
	}
	return m
}

// own reports whether d (relative) is a package of the module.
func own(m map[string]pkg, d string) bool { _, ok := m[d]; return ok }

func isStd(p string) bool { return !strings.Contains(strings.SplitN(p, "/", 2)[0], ".") }

// sdks are the client libraries of outside services, each with the package
// that alone may import it. The model vendors' SDKs are not used at all: the
// adapters speak the vendors' HTTP APIs themselves (see llm/gemini's doc).
var sdks = map[string]string{
	// The chat platforms' client libraries: each only by its channel.
	"github.com/go-telegram/bot":    "gateway/telegram",
	"github.com/slack-go/slack":     "gateway/slack",
	"github.com/bwmarrin/discordgo": "gateway/discord",
}

var adapters = []string{"llm/anthropic", "llm/openai", "llm/gemini", "llm/ollama"}

// leaves are packages anything may reach: stdlib-only (or nearly) helpers
// at the bottom of the layout. llm/vendorhttp (the standard library and
// llm) is one for the packages at the edge that speak HTTP; the core
// packages cannot reach it, as it links net/http (TestCoreHasNoHTTP).
var leaves = []string{"llm", "tokens", "tokens/llmtokens", "internal/suggest", "internal/shellparse", "internal/jsonevents", "exec/egress",
	"exec/helper", "llm/vendorhttp"}

// arrows lists, for the core packages of docs/architecture.md's layout, the module
// packages each may reach (transitively) besides the leaves. A package
// under a listed one (llm/anthropic under llm) is not covered by the
// parent's entry; each is checked under its own.
var arrows = map[string][]string{
	"llm":                          {},
	"tokens":                       {},
	"tokens/llmtokens":             {},
	"exec":                         {},
	"exec/egress":                  {},
	"exec/helper":                  {},
	"tool":                         {},
	"tool/builtin":                 {"tool", "exec"},
	"attachment":                   {"tool"},
	"permission":                   {"tool"},
	"hook":                         {"tool"},
	"hook/httphook":                {"hook", "tool"},
	"agent":                        {"tool", "permission", "hook"},
	"compact":                      {"agent", "tool", "permission", "hook"},
	"session":                      {},
	"session/jsonl":                {"session"},
	"session/sessiontest":          {"session"},
	"llm/anthropic":                {},
	"llm/openai":                   {},
	"llm/gemini":                   {},
	"llm/ollama":                   {},
	"llm/vendorhttp":               {},
	"llm/registry":                 adapters,
	"llm/replay":                   {},
	"llm/llmtest":                  {"llm/llmtest/mockserver"},
	"llm/llmtest/mockserver":       {},
	"internal/suggest":             {},
	"internal/shellparse":          {},
	"internal/jsonevents":          {},
	"internal/secretenv":           {},
	"internal/faultproxy":          {},
	"eventbus":                     {},
	"eventbus/bustest":             {"eventbus"},
	"session/sqlite":               {"session", "internal/migration", "internal/sqlitedb"},
	"session/postgres":             {"session", "internal/migration", "internal/migration/pgmigrate", "internal/pgdb"},
	"internal/migration":           {},
	"internal/migration/pgmigrate": {"internal/migration"},
	"internal/sqlitedb":            {"internal/migration"},
	"internal/pgdb":                {},
	"eventbus/redisbus":            {"eventbus", "internal/redisconn"},
	"internal/redisconn":           {},
	"telemetry":                    {},
	"api":                          {"session"},
	"client":                       {"api", "session"},
	"server":                       {"api", "attachment", "session", "eventbus", "permission", "tool", "runner", "console"},
	"console":                      {},
	"mcpserver":                    {"runner", "agent", "attachment", "compact", "tool", "tool/builtin", "tool/mcptool", "tool/skill", "tool/action", "exec", "permission", "hook", "hook/httphook", "session", "eventbus", "telemetry", "llm/registry", "workspace", "memory", "tool/memorytool", "kb", "kb/sqlite", "tool/kbtool", "internal/migration", "internal/sqlitedb", "internal/atomicfile", "session/sqlite", "runner/queue", "internal/secretenv"},
	"workspace":                    {"permission", "hook", "hook/httphook", "tool", "llm/registry", "internal/atomicfile", "internal/secretenv", "memory"},
	"command":                      {"workspace", "attachment", "permission", "hook", "hook/httphook", "tool", "llm/registry", "internal/atomicfile", "internal/secretenv", "memory"},
	"tool/mcptool":                 {"tool"},
	"tool/skill":                   {"tool"},
	"tool/action":                  {"tool", "exec", "tool/builtin"},
	"memory":                       {},
	"tool/memorytool":              {"tool", "memory"},
	"persona":                      {"memory", "internal/atomicfile"},
	"internal/atomicfile":          {},
	"kb":                           {},
	"kb/kbtest":                    {"kb"},
	"kb/sqlite":                    {"kb", "internal/migration", "internal/sqlitedb"},
	"kb/postgres":                  {"kb", "internal/migration", "internal/migration/pgmigrate", "internal/pgdb"},
	"tool/kbtool":                  {"tool", "kb"},
	"runner": {"agent", "attachment", "compact", "tool", "tool/builtin", "tool/mcptool", "tool/skill", "tool/action", "exec",
		"permission", "hook", "hook/httphook", "session", "eventbus", "telemetry", "llm/registry", "workspace",
		"memory", "tool/memorytool", "kb", "kb/sqlite", "tool/kbtool", "internal/migration", "internal/sqlitedb", "internal/atomicfile", "session/sqlite",
		"runner/queue", "internal/secretenv"},
	"gateway": {"agent", "attachment", "tool", "permission", "hook", "session", "eventbus", "memory", "persona",
		"internal/migration", "internal/sqlitedb", "internal/atomicfile"},
	"acp": {"runner", "agent", "attachment", "compact", "tool", "tool/builtin", "tool/mcptool", "tool/skill", "tool/action", "exec",
		"permission", "hook", "hook/httphook", "session", "eventbus", "telemetry", "llm/registry", "workspace",
		"memory", "tool/memorytool", "kb", "kb/sqlite", "tool/kbtool", "internal/migration", "internal/sqlitedb", "internal/atomicfile", "session/sqlite",
		"runner/queue", "internal/secretenv"},
	"mirror":                  {"session", "internal/sqlitedb", "internal/migration"},
	"runner/queue":            {},
	"runner/queue/queuetest":  {"runner/queue"},
	"runner/queue/redisqueue": {"runner/queue", "internal/redisconn"},
	"fileindex":               {},
	"checkpoint":              {"internal/atomicfile"},
}

// exception is a known violation of an arrow, kept visible until fixed.
type exception struct{ pkg, dep, todo string }

// known are the violations the layout has today. Each names its issue; the
// test fails when one no longer occurs, so the list only shrinks.
var known = []exception{}

// frontEnd reports the packages that wire everything: cli, cmd, examples.
func frontEnd(p string) bool {
	return p == "cli" || hasPrefix(p, []string{"cli/", "cmd/", "examples/"})
}

// TestLayout checks the arrows of docs/architecture.md over transitive dependencies:
// llm and tokens use only the standard library, exec the standard library
// and golang.org/x/sys; a vendor SDK is imported only by its adapter and
// reached only through it (by the registry and the front ends); only the
// front ends and the registry reach a concrete adapter; each core package
// reaches only the packages its arrows allow (session never agent); no
// package outside the front ends reaches cli or server.
func TestLayout(t *testing.T) {
	m := packages(t)
	seen := map[exception]bool{}
	var errs []string
	report := func(p, d, format string, args ...any) {
		for _, e := range known {
			if e.pkg == p && e.dep == d {
				seen[e] = true
				return
			}
		}
		errs = append(errs, p+": "+fmt.Sprintf(format, args...))
	}
	for p, info := range m {
		for _, d := range info.imports {
			for sdk, owner := range sdks {
				if strings.HasPrefix(d, sdk) && p != owner && !strings.HasPrefix(p, owner+"/") {
					report(p, d, "imports the vendor SDK %s: only %s may", d, owner)
				}
			}
		}
		for _, d := range info.deps {
			std := isStd(d) && !own(m, d) // the module's paths are relative here
			switch {
			case (p == "llm" || p == "tokens") && !std:
				report(p, d, "reaches %s: it may use only the standard library", d)
			case p == "llm/vendorhttp" && !std && d != "llm":
				report(p, d, "reaches %s: it may use only the standard library and llm", d)
			case p == "exec" && !std && !strings.HasPrefix(d, "golang.org/x/sys/") && !(own(m, d) && slices.Contains(leaves, d)):
				report(p, d, "reaches %s: it may use only the standard library and golang.org/x/sys", d)
			case !own(m, d) && sdkOf(d) != "" && !frontEnd(p) && p != "llm/registry" && !strings.HasPrefix(p, sdkOf(d)):
				report(p, d, "reaches the vendor SDK %s: only %s (and the registry, cli, cmd) may", d, sdkOf(d))
			case own(m, d) && (d == "cli" || hasPrefix(d, []string{"cli/", "server"})) && !frontEnd(p):
				report(p, d, "reaches %s: only cmd/ and examples/ may", d)
			case own(m, d) && slices.Contains(adapters, d) && !frontEnd(p) && p != "llm/registry":
				report(p, d, "reaches the adapter %s: only cli, cmd and the registry pick adapters", d)
			case own(m, d) && arrows[p] != nil && !allowed(p, d):
				report(p, d, "reaches %s, outside its arrows in docs/architecture.md (%s → %s)", d, p, strings.Join(append(slices.Clone(arrows[p]), leaves...), ", "))
			}
		}
	}
	sort.Strings(errs)
	for _, e := range errs {
		t.Error(e)
	}
	for _, e := range known {
		if seen[e] {
			t.Logf("known exception: %s reaches %s (%s)", e.pkg, e.dep, e.todo)
		} else {
			t.Errorf("known exception %s → %s no longer occurs: remove it from the list", e.pkg, e.dep)
		}
	}
}

// allowed reports whether core package p may reach module package d.
func allowed(p, d string) bool {
	if d == p || slices.Contains(leaves, d) && !(p == "llm" || p == "tokens") {
		return true
	}
	return slices.Contains(arrows[p], d)
}

// TestArrowsCoverCore keeps the table honest: every package it names
// exists (a renamed package would silently lose its check).
func TestArrowsCoverCore(t *testing.T) {
	m := packages(t)
	for p, to := range arrows {
		for _, q := range append([]string{p}, to...) {
			if !own(m, q) {
				t.Errorf("arrows name %s, which is not a package of the module", q)
			}
		}
	}
}

func sdkOf(d string) string {
	for sdk, owner := range sdks {
		if strings.HasPrefix(d, sdk) {
			return owner
		}
	}
	return ""
}

func hasPrefix(s string, ps []string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
