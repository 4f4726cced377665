package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Spec is a hook as declared in a file.
type Spec struct {
	Event     Event
	Name      string
	Matcher   string
	Command   string            // a command hook, or
	URL       string            // an HTTP hook
	Headers   map[string]string // HTTP only
	Timeout   time.Duration     // zero: the registry's default
	Priority  int
	OnFailure FailurePolicy
	// Env names the variables of rein's environment the hook gets on top
	// of [BaseEnv] (a command's environment; an HTTP hook's headers):
	// `env: [GITHUB_TOKEN]` in rein's format, allowedEnvVars on a Claude
	// Code http hook.
	Env []string
	// Claude marks a hook declared in Claude Code's format; it receives
	// Claude Code's event and tool names.
	Claude bool
}

// maxTimeout bounds a declared timeout.
const maxTimeout = 24 * time.Hour

// reinFields are the keys of a hook in rein's format.
var reinFields = []string{"name", "matcher", "command", "url", "headers", "env", "timeout", "priority", "on_failure", "type"}

// Parse reads hook declarations from `.rein/hooks.yaml`:
//
//	hooks:
//	  pre_tool_use:
//	    - {matcher: bash, command: ./guard.sh, timeout: 10, priority: 0, on_failure: block}
//	    - {matcher: "*", url: "http://127.0.0.1:8080/hook"}
//	  stop:
//	    - {command: ./notify.sh, env: [SLACK_WEBHOOK_URL]}
//
// or from a Claude Code settings.json (other keys are ignored):
//
//	{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "…"}]}]}}
//
// Timeouts are seconds or durations ("1m"). env (allowedEnvVars on a
// Claude Code http hook) lists variable names. Specs come out grouped by
// event in the order of [Events], then in file order.
func Parse(data []byte) ([]Spec, error) {
	var top map[string]any
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, nil
	}
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &top) != nil {
		top = nil
		if err := yaml.Unmarshal(data, &top); err != nil {
			return nil, fmt.Errorf("hook: %w", err)
		}
	}
	raw, ok := top["hooks"]
	if !ok || raw == nil {
		return nil, nil
	}
	byEvent, ok := asMap(raw)
	if !ok {
		return nil, errors.New("hook: hooks: want a mapping from event names to lists of hooks")
	}
	keys := make([]string, 0, len(byEvent))
	for k := range byEvent {
		keys = append(keys, k)
	}
	order := func(k string) int {
		ev, _, _ := ParseEvent(k)
		return slices.Index(Events, ev)
	}
	sort.Slice(keys, func(i, j int) bool {
		if oi, oj := order(keys[i]), order(keys[j]); oi != oj {
			return oi < oj
		}
		return keys[i] < keys[j]
	})
	var specs []Spec
	for _, key := range keys {
		ev, claude, err := ParseEvent(key)
		if err != nil {
			return nil, err
		}
		list, ok := byEvent[key].([]any)
		if !ok && byEvent[key] != nil {
			return nil, fmt.Errorf("hook: hooks.%s: want a list of hooks", key)
		}
		for i, item := range list {
			where := fmt.Sprintf("hooks.%s[%d]", key, i)
			m, ok := asMap(item)
			if !ok {
				return nil, fmt.Errorf("hook: %s: want a mapping", where)
			}
			var got []Spec
			if _, nested := m["hooks"]; nested {
				got, err = parseGroup(ev, where, m)
			} else {
				var s Spec
				s, err = parseEntry(ev, where, m, claude)
				got = []Spec{s}
			}
			if err != nil {
				return nil, err
			}
			specs = append(specs, got...)
		}
	}
	return specs, nil
}

// Load reads a hooks file; a missing file declares no hooks.
func Load(path string) ([]Spec, error) {
	data, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hook: %w", err)
	}
	specs, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return specs, nil
}

// maxFileBytes bounds a hooks file: a repository's must not make rein
// read without end (a link to /dev/zero).
const maxFileBytes = 1 << 20

// readFile reads a hooks file: a regular file (through links) of at most
// maxFileBytes.
func readFile(path string) ([]byte, error) {
	fi, err := os.Stat(path) // before opening: opening a FIFO would wait for a writer
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (a hooks file must be one)", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d KiB: a hooks file must be smaller", path, maxFileBytes>>10)
	}
	return data, nil
}

// parseEntry reads one hook in rein's format.
func parseEntry(ev Event, where string, m map[string]any, claude bool) (Spec, error) {
	for k := range m {
		if !slices.Contains(reinFields, k) {
			return Spec{}, fmt.Errorf("hook: %s: unknown field %q (valid: %s)", where, k, strings.Join(reinFields, ", "))
		}
	}
	s := Spec{Event: ev, Claude: claude}
	var err error
	str := func(k string) string {
		v, e := stringField(m, k, where)
		if err == nil {
			err = e
		}
		return v
	}
	s.Name, s.Matcher, s.Command, s.URL = str("name"), str("matcher"), str("command"), str("url")
	typ, onFailure := str("type"), str("on_failure")
	if err != nil {
		return Spec{}, err
	}
	if s.Timeout, err = timeoutField(m["timeout"], where); err != nil {
		return Spec{}, err
	}
	if s.Priority, err = intField(m["priority"], where+".priority"); err != nil {
		return Spec{}, err
	}
	switch FailurePolicy(onFailure) {
	case "", FailSkip, FailBlock:
		s.OnFailure = FailurePolicy(onFailure)
	default:
		return Spec{}, fmt.Errorf("hook: %s: on_failure %q (want skip or block)", where, onFailure)
	}
	if s.Env, err = envField(m["env"], where+".env"); err != nil {
		return Spec{}, err
	}
	if s.Headers, err = headersField(m["headers"], where); err != nil {
		return Spec{}, err
	}
	return s, checkTarget(s, typ, where)
}

// headersField reads a mapping of header names to values.
func headersField(h any, where string) (map[string]string, error) {
	if h == nil {
		return nil, nil
	}
	hm, ok := asMap(h)
	if !ok {
		return nil, fmt.Errorf("hook: %s: headers: want a mapping of names to values", where)
	}
	out := map[string]string{}
	for k, v := range hm {
		sv, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("hook: %s: header %q: want a string", where, k)
		}
		out[k] = sv
	}
	return out, nil
}

// envField reads a list of variable names.
func envField(v any, where string) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("hook: %s: want a list of variable names", where)
	}
	out := make([]string, 0, len(list))
	for _, item := range list {
		name, ok := item.(string)
		if !ok || !envName().MatchString(name) {
			return nil, fmt.Errorf("hook: %s: %v is not a variable name", where, item)
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// checkTarget wants exactly one of command and url, consistent with type.
func checkTarget(s Spec, typ, where string) error {
	switch {
	case s.Command == "" && s.URL == "":
		return fmt.Errorf("hook: %s: give a command or a url", where)
	case s.Command != "" && s.URL != "":
		return fmt.Errorf("hook: %s: give a command or a url, not both", where)
	case typ != "" && typ != "command" && typ != "http":
		return fmt.Errorf("hook: %s: type %q is not supported (command or http)", where, typ)
	case (typ == "command" && s.Command == "") || (typ == "http" && s.URL == ""):
		return fmt.Errorf("hook: %s: a %s hook needs its %s", where, typ, map[string]string{"command": "command", "http": "url"}[typ])
	}
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("hook: %s: url %q: want an http or https URL", where, s.URL)
		}
	}
	return nil
}

// parseGroup reads Claude Code's {matcher, hooks: [{type, command, timeout}]}.
func parseGroup(ev Event, where string, m map[string]any) ([]Spec, error) {
	matcher, err := stringField(m, "matcher", where)
	if err != nil {
		return nil, err
	}
	list, ok := m["hooks"].([]any)
	if !ok {
		return nil, fmt.Errorf("hook: %s.hooks: want a list", where)
	}
	var out []Spec
	for i, item := range list {
		w := fmt.Sprintf("%s.hooks[%d]", where, i)
		h, ok := asMap(item)
		if !ok {
			return nil, fmt.Errorf("hook: %s: want a mapping", w)
		}
		s := Spec{Event: ev, Matcher: matcher, Claude: true}
		if err := claudeUnsupported(h, w); err != nil {
			return nil, err
		}
		typ, err := stringField(h, "type", w)
		if err != nil {
			return nil, err
		}
		switch typ {
		case "command", "":
			s.Command, err = stringField(h, "command", w)
		case "http":
			s.URL, err = stringField(h, "url", w)
			if err == nil {
				s.Headers, err = headersField(h["headers"], w)
			}
			if err == nil {
				s.Env, err = envField(h["allowedEnvVars"], w+".allowedEnvVars")
			}
		default:
			return nil, fmt.Errorf("hook: %s: type %q hooks are not supported by rein (command and http are)", w, typ)
		}
		if err != nil {
			return nil, err
		}
		if s.Timeout, err = timeoutField(h["timeout"], w); err != nil {
			return nil, err
		}
		if err := checkTarget(s, typ, w); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// claudeUnsupportedKeys are fields of a Claude Code hook rein does not
// honour, each with what a hook declaring it would do wrong if run anyway.
var claudeUnsupportedKeys = map[string]string{
	"if":          "it would run for every call its matcher selects, not only those the condition names",
	"async":       "it would run in the foreground and could block",
	"asyncRewake": "it would run in the foreground",
	"once":        "it would run every time",
	"args":        "its exec form is not supported; write the command as one shell string",
}

// claudeUnsupported refuses a Claude Code hook that declares what rein does
// not honour, rather than run it with another meaning (SPEC COMPAT-1).
// shell "bash" is what rein uses anyway; statusMessage only shows.
func claudeUnsupported(h map[string]any, where string) error {
	for _, k := range slices.Sorted(maps.Keys(h)) {
		if why, ok := claudeUnsupportedKeys[k]; ok && h[k] != nil && h[k] != false {
			return fmt.Errorf("hook: %s: %q is not supported by rein (%s): remove it, or keep the hook for Claude Code only", where, k, why)
		}
	}
	if sh, ok := h["shell"].(string); ok && sh != "" && sh != "bash" {
		return fmt.Errorf("hook: %s: shell %q is not supported by rein (its commands run with bash)", where, sh)
	}
	return nil
}

// asMap accepts the mappings JSON and YAML decoders produce.
func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, x := range m {
			out[fmt.Sprint(k)] = x
		}
		return out, true
	}
	return nil, false
}

func stringField(m map[string]any, key, where string) (string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("hook: %s.%s: want a string", where, key)
	}
	return strings.TrimSpace(s), nil
}

// numberOf reads the numbers JSON (float64) and YAML (int, float64) give.
func numberOf(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func intField(v any, where string) (int, error) {
	if v == nil {
		return 0, nil
	}
	n, ok := numberOf(v)
	if !ok || n != math.Trunc(n) || math.Abs(n) > 1e9 {
		return 0, fmt.Errorf("hook: %s: want a whole number", where)
	}
	return int(n), nil
}

// timeoutField reads seconds (10, 2.5) or a duration ("1m30s").
func timeoutField(v any, where string) (time.Duration, error) {
	if v == nil {
		return 0, nil
	}
	var d time.Duration
	bad := fmt.Errorf("hook: %s.timeout: want seconds (10) or a duration (1m), at most %s", where, maxTimeout)
	if n, ok := numberOf(v); ok {
		if n <= 0 || n > maxTimeout.Seconds() {
			return 0, bad
		}
		d = time.Duration(n * float64(time.Second))
	} else if s, ok := v.(string); ok {
		if secs, err := strconv.ParseFloat(s, 64); err == nil && secs > 0 && secs <= maxTimeout.Seconds() {
			d = time.Duration(secs * float64(time.Second))
		} else if pd, err := time.ParseDuration(s); err == nil {
			d = pd
		}
	}
	if d <= 0 || d > maxTimeout {
		return 0, bad
	}
	return d, nil
}

// Registration turns a spec into a registration with a [Command] or [HTTP]
// hook; projectDir is exported to commands as CLAUDE_PROJECT_DIR and
// REIN_PROJECT_DIR and is their working directory. getenv reads rein's
// environment (nil: the process's), of which the hook gets [BaseEnv] and
// the variables it names (Spec.Env). post sends HTTP hooks' requests.
func (s Spec) Registration(projectDir string, getenv func(string) string, post Poster) Registration {
	r := Registration{Name: s.Name, Event: s.Event, Matcher: s.Matcher, Priority: s.Priority,
		Timeout: s.Timeout, OnFailure: s.OnFailure}
	if s.Command != "" {
		r.Hook = &Command{Command: s.Command, Dir: projectDir, ProjectDir: projectDir, Timeout: s.Timeout, Claude: s.Claude,
			PassEnv: s.Env, Getenv: getenv}
		if r.Name == "" {
			r.Name = "command " + shorten(s.Command, 60)
		}
	} else {
		r.Hook = &HTTP{URL: s.URL, Headers: s.Headers, Timeout: s.Timeout, Claude: s.Claude, PassEnv: s.Env, Getenv: getenv, Poster: post}
		if r.Name == "" {
			r.Name = "http " + s.URL
		}
	}
	return r
}

// Registrations turns specs into registrations (see [Spec.Registration]).
func Registrations(specs []Spec, projectDir string, getenv func(string) string, post Poster) []Registration {
	out := make([]Registration, len(specs))
	for i, s := range specs {
		out[i] = s.Registration(projectDir, getenv, post)
	}
	return out
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
