package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/reinhq/rein/internal/suggest"
	"github.com/reinhq/rein/permission"
)

// Settings is one settings file as read: the values of the keys it sets and
// the keys it holds that rein does not know.
type Settings struct {
	// Path is the file, empty for settings parsed from bytes.
	Path string
	// Values maps key names to checked values.
	Values map[string]string
	// Unknown lists the keys rein does not know, as "name (line N)"; they
	// are ignored, and `rein doctor` warns about them.
	Unknown []string
	// Permissions is the file's permissions section (rules, sensitive
	// files), as package permission reads it.
	Permissions permission.Settings
	// SkillEnv lists the variables skills may read through ${env:X}
	// (skills.env, SPEC SKILL-2). Only the user's file counts: a
	// workspace's is ignored, with a warning ([Loaded.SkillEnv]).
	SkillEnv []string
	// ToolTimeouts bounds each call of the tools whose names match
	// (tools.timeouts: {bash: 10m, "mcp__*": 1m}, SPEC TOOL-2); `*`
	// wildcards match. The workspace's entries win over the user's.
	ToolTimeouts map[string]time.Duration
}

// listKeys are the keys of the permissions section that hold lists; package
// permission reads them.
var listKeys = []string{"permissions.allow", "permissions.ask", "permissions.deny", "permissions.sensitive_files"}

// ParseSettings reads a settings document:
//
//	model: anthropic/claude-sonnet-4-5
//	max_turns: 50
//	permissions:
//	  mode: accept-edits
//	  allow: ["bash(go test:*)"]
//	skills:
//	  env: [JIRA_URL]   # user settings only
//	subagents:
//	  max_depth: 2
//	tools:
//	  timeouts: {bash: 10m, "mcp__*": 1m}
//	memory: on
//	kb:
//	  embedding_model: openai/text-embedding-3-small
//
// Every known key is checked (a bad value is an error naming its line);
// unknown keys are listed in Unknown. An empty document is empty settings.
func ParseSettings(data []byte, src permission.Source) (Settings, error) {
	s := Settings{Values: map[string]string{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Settings{}, fmt.Errorf("not valid YAML: %w", err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return s, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return s, nil
	}
	if root.Kind != yaml.MappingNode {
		return Settings{}, fmt.Errorf("line %d: want a mapping of settings (key: value)", root.Line)
	}
	if err := s.walk(root, ""); err != nil {
		return Settings{}, err
	}
	perms, err := permission.ParseSettings(data, src)
	if err != nil {
		return Settings{}, err
	}
	perms.Mode, perms.AskTimeout = "", 0 // resolved as keys, with the other layers
	s.Permissions = perms
	return s, nil
}

// walk reads the pairs of a mapping whose keys start with prefix.
func (s *Settings) walk(m *yaml.Node, prefix string) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		kn, vn := m.Content[i], m.Content[i+1]
		if kn.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: a key must be plain text", kn.Line)
		}
		name := prefix + kn.Value
		if name == sandboxProfile {
			name = Sandbox
		}
		if name == Sandbox && vn.Kind == yaml.MappingNode {
			if err := s.walk(vn, Sandbox+"."); err != nil {
				return err
			}
			continue
		}
		if key, ok := Lookup(name); ok {
			if err := s.set(key, vn); err != nil {
				return err
			}
			continue
		}
		switch {
		case name == "permissions" && vn.Kind == yaml.MappingNode:
			if err := s.walk(vn, "permissions."); err != nil {
				return err
			}
		case name == "permissions" && isNull(vn):
		case name == "skills" && vn.Kind == yaml.MappingNode:
			if err := s.walk(vn, "skills."); err != nil {
				return err
			}
		case name == "skills" && isNull(vn), name == "tools" && isNull(vn), name == "subagents" && isNull(vn), name == "kb" && isNull(vn),
			name == "mcp" && isNull(vn):
		case (name == "tools" || name == "subagents" || name == "kb" || name == "mcp") && vn.Kind == yaml.MappingNode:
			if err := s.walk(vn, name+"."); err != nil {
				return err
			}
		case name == "tools.timeouts":
			t, err := timeouts(vn, name)
			if err != nil {
				return err
			}
			s.ToolTimeouts = t
		case name == "skills.env":
			env, err := envList(vn, name)
			if err != nil {
				return err
			}
			s.SkillEnv = env
		case slices.Contains(listKeys, name):
		default:
			s.Unknown = append(s.Unknown, fmt.Sprintf("%s (line %d)%s", name, kn.Line, didYouMean(name)))
		}
	}
	return nil
}

// didYouMean names the setting an unknown key is a few letters from
// (`modle` → model), as " (did you mean model?)"; "" when none is.
func didYouMean(name string) string {
	names := append([]string{"permissions", "tools.timeouts", "skills.env"}, listKeys...)
	for _, k := range keys {
		names = append(names, k.Name)
	}
	near := suggest.Closest(name, names, 1)
	if len(near) == 0 || suggest.Distance(strings.ToLower(name), strings.ToLower(near[0])) > max(2, len(name)/4) {
		return ""
	}
	return " (did you mean " + near[0] + "?)"
}

// timeouts reads a mapping of tool-name patterns to durations.
func timeouts(n *yaml.Node, key string) (map[string]time.Duration, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: %s: want a mapping of tool names to durations, e.g. {bash: 10m}", n.Line, key)
	}
	out := map[string]time.Duration{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if _, err := path.Match(kn.Value, ""); err != nil || kn.Value == "" {
			return nil, fmt.Errorf("line %d: %s: %q is not a tool name or pattern", kn.Line, key, kn.Value)
		}
		d, err := ParseDuration(vn.Value)
		if err != nil || vn.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: %s.%s: want a duration such as 90s or 5m", vn.Line, key, kn.Value)
		}
		out[kn.Value] = d
	}
	return out, nil
}

// set checks and keeps the value of a known key.
func (s *Settings) set(k Key, n *yaml.Node) error {
	if isNull(n) {
		return nil
	}
	raw := n.Value
	switch {
	case k.Kind == KindList && n.Kind == yaml.SequenceNode:
		items := make([]string, 0, len(n.Content))
		for _, it := range n.Content {
			if it.Kind != yaml.ScalarNode || strings.ContainsRune(it.Value, '\n') {
				return fmt.Errorf("line %d: %s: want a list of single values", it.Line, k.Name)
			}
			items = append(items, it.Value)
		}
		raw = strings.Join(items, "\n")
	case n.Kind != yaml.ScalarNode:
		return fmt.Errorf("line %d: %s: want a single value", n.Line, k.Name)
	}
	v, err := k.Check(raw)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	s.Values[k.Name] = v
	return nil
}

// envList reads a list of variable names (one name alone is a list of
// one).
func envList(n *yaml.Node, key string) ([]string, error) {
	items := []*yaml.Node{n}
	switch {
	case isNull(n):
		return nil, nil
	case n.Kind == yaml.SequenceNode:
		items = n.Content
	case n.Kind != yaml.ScalarNode:
		return nil, fmt.Errorf("line %d: %s: want a list of variable names", n.Line, key)
	}
	var out []string
	for _, it := range items {
		if it.Kind != yaml.ScalarNode || !envNameRE().MatchString(it.Value) {
			return nil, fmt.Errorf("line %d: %s: %q is not a variable name (letters, digits and _, not starting with a digit)", it.Line, key, it.Value)
		}
		if !slices.Contains(out, it.Value) {
			out = append(out, it.Value)
		}
	}
	return out, nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && (n.Tag == "!!null" || n.Value == "")
}

// LoadSettings reads a settings file; a missing file is empty settings.
// Errors name the file. It reads a regular file of at most 1 MiB (a
// repository's link to /dev/zero or a FIFO is an error, never a hang).
func LoadSettings(path string, src permission.Source) (Settings, error) {
	data, err := readConfig(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{Path: path, Values: map[string]string{}}, nil
	}
	if err != nil {
		return Settings{}, err
	}
	s, err := ParseSettings(data, src)
	if err != nil {
		return Settings{}, fmt.Errorf("%s: %w", path, err)
	}
	s.Path = path
	return s, nil
}

// Layer returns the settings as a configuration layer.
func (s Settings) Layer(src Source) Layer {
	return Layer{Source: src, Origin: s.Path, Values: s.Values}
}

// RuleLines returns the permission rules of the settings, one
// "action rule" string each, for display.
func (s Settings) RuleLines() []string {
	out := make([]string, 0, len(s.Permissions.Rules))
	for _, r := range s.Permissions.Rules {
		out = append(out, fmt.Sprintf("%s %s", r.Action, r.String()))
	}
	return out
}
