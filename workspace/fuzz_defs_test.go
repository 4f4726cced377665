package workspace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// checkProblems fails on a problem without a path or with a line beyond
// the file (counting every line break YAML knows).
func checkProblems(t *testing.T, data []byte, probs []Problem) {
	t.Helper()
	lines := 1
	for _, brk := range []string{"\n", "\r", "\u0085", "\u2028", "\u2029"} {
		lines += bytes.Count(data, []byte(brk))
	}
	for _, p := range probs {
		if p.Path == "" || p.Msg == "" || p.Line < 0 || p.Line > lines+1 {
			t.Fatalf("problem %+v of a %d-line file", p, lines)
		}
	}
}

// FuzzSplitFrontmatter: any input splits or fails cleanly; the body is
// the end of the file, the YAML lies inside it.
func FuzzSplitFrontmatter(f *testing.F) {
	for _, s := range []string{
		"", "---", "---\n", "---\n---", "---\r\na: 1\r\n---\r\nbody", "\ufeff---\nname: x\n---\n", "text\n---\n",
		"--- \nx\n---  \n", "---\n---\n---\n", "\ufeff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fm, err := splitFrontmatter(data)
		if err != nil {
			return
		}
		rest := bytes.TrimPrefix(data, bom)
		if !bytes.HasSuffix(rest, []byte(fm.body)) {
			t.Fatalf("body %q is not the end of %q", fm.body, data)
		}
		if fm.found && (!bytes.Contains(rest, fm.yaml) || fm.line != 2) {
			t.Fatalf("frontmatter %q (line %d) of %q", fm.yaml, fm.line, data)
		}
	})
}

// FuzzParseAgent: agent files never panic the parser; what loads has a
// valid name and a description, and problems point into the file.
func FuzzParseAgent(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\ndescription: d\ntools: Read, Bash(git:*)\nmodel: inherit\npermissionMode: plan\nmaxTurns: 3\n---\nbody\n",
		"---\n---\n", "---\nname: [\n---\n", "---\n- a\n---\n", "---\ndescription: &x d\nname: *x\n---\n",
		"---\ndescription: d\ntools: [a, {b: c}]\nmax_turns: -1\n---\n", "no frontmatter",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, probs, ok := parseAgent("a.md", data, "fallback")
		checkProblems(t, data, probs)
		if ok && (!nameRE().MatchString(a.Name) || a.Description == "" || a.MaxTurns < 0) {
			t.Fatalf("loaded %+v", a)
		}
	})
}

// FuzzParseSkill: SKILL.md files never panic the parser; what loads has
// a valid name and a bounded description.
func FuzzParseSkill(f *testing.F) {
	for _, s := range []string{
		"---\nname: pdf\ndescription: d\nallowed-tools: Read Grep\n---\nbody", "---\ndescription: d\n---\n",
		"---\nname: BAD\ndescription: d\n---\n", "---\nallowed-tools: {a: b}\ndescription: x\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, probs, ok := parseSkill("SKILL.md", data, "dir")
		checkProblems(t, data, probs)
		if ok && (!skillNameRE().MatchString(s.Name) || s.Description == "" || len([]rune(s.Description)) > maxSkillDescription) {
			t.Fatalf("loaded %+v", s)
		}
	})
}

// FuzzParseAction: ACTION.yaml never panics the parser; what loads has a
// command and an object schema that compiles.
func FuzzParseAction(f *testing.F) {
	for _, s := range []string{
		"description: d\ncommand: [a, b]\ninput_schema: {type: object, properties: {x: {type: string}}}\ntimeout: 5s\nenv: [A]\n",
		"description: d\ncommand: echo hi\n", "description: d\ncommand: []\n", "description: d\ninput_schema: {type: object, x: .nan}\ncommand: x\n",
		"description: d\ninput_schema: {type: object, properties: {a: {type: 7}}}\ncommand: x\n", "- a\n", "a: &a [*a]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, probs, ok := parseAction("ACTION.yaml", data, "dir")
		checkProblems(t, data, probs)
		if !ok {
			return
		}
		var schema map[string]any
		if !nameRE().MatchString(a.Name) || a.Description == "" || (len(a.Command) == 0) == (a.Script == "") ||
			json.Unmarshal(a.InputSchema, &schema) != nil || schema["type"] != "object" {
			t.Fatalf("loaded %+v", a)
		}
	})
}

// FuzzParseMCP: mcp.yaml and .mcp.json never panic their parsers; every
// server loaded has a valid name and one way to reach it.
func FuzzParseMCP(f *testing.F) {
	for _, s := range []string{
		"servers:\n  a: {command: x, args: [y], env: {K: \"${K:-v}\"}}\n  b: {url: http://h, headers: {A: b}, timeout: 3}\n",
		`{"mcpServers": {"a": {"command": "x", "args": ["${A}"]}, "b": {"type": "sse", "url": "http://h"}}}`,
		`{"mcpServers": {"a": {"type": "http", "command": "x"}}}`, `{"mcpServers": [1, 2]}`, `[[[[[[[[[[]]]]]]]]]]`,
		`{"a": 1} x`, `{"a": "\ud83d\ude00"}`, "servers: {a: {disabled: true}}\n", "",
	} {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"mcpServers": {"a": {"command": "x", "env": {"K": "${ANTHROPIC_API_KEY}"}}}}`))
	getenv := func(k string) string {
		switch k {
		case "A":
			return "1"
		case "ANTHROPIC_API_KEY":
			return "sk-ant-fuzz"
		}
		return ""
	}
	workspace := envReader{getenv: getenv, refuse: func(n string) bool { return isCredential(n, nil) }}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, parse := range []func(string, []byte, envReader) ([]MCPServer, []Problem){parseMCPYAML, parseMCPJSON} {
			for _, env := range []envReader{{getenv: getenv}, workspace} {
				servers, probs := parse("mcp", data, env)
				checkProblems(t, data, probs)
				for _, s := range servers {
					if !nameRE().MatchString(s.Name) || strings.Contains(s.Name, "__") || (s.Command != "" && s.URL != "") ||
						(s.Command == "" && s.URL == "" && !s.Disabled) {
						t.Fatalf("loaded %+v", s)
					}
					// PERM-5, MCP-2: a workspace's server never holds the key.
					if env.refuse != nil && strings.Contains(fmt.Sprint(s), "sk-ant-fuzz") {
						t.Fatalf("a workspace's server got the provider key: %+v", s)
					}
				}
			}
		}
	})
}
