package permission

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// Settings configure a policy: one layer as read from a file, or several
// merged with [Merge].
type Settings struct {
	// Mode is the permission mode; empty leaves it to another layer (and is
	// [ModeDefault] in the end).
	Mode Mode
	// AskTimeout bounds how long a confirmation may wait; zero leaves it to
	// another layer (and is [DefaultAskTimeout] in the end).
	AskTimeout time.Duration
	// Rules are the allow, ask and deny rules, each with its Source.
	Rules []Rule
	// SensitiveFiles add to [DefaultSensitiveFiles]; a pattern starting with
	// ! is an exception (`!.env.example`).
	SensitiveFiles []string
	// Store keeps the rules [Engine.Add] is given ("always" answers); nil
	// keeps them for the life of the engine only.
	Store RuleStore
	// SensitiveHidden says commands run where the workspace's sensitive
	// files are hidden from them (the bubblewrap sandbox): a recursive read
	// inside the workspace then reveals none, and does not ask. Naming a
	// sensitive file is denied all the same.
	SensitiveHidden bool
	// Tenant says the run is a server caller's (SPEC API-9): the caller may
	// not widen for itself what reaches beyond its run. A call to this
	// machine or a private network (a web_fetch of 127.0.0.1, of the
	// cloud's metadata address), and a file tool's change to a protected
	// path (.git/hooks, .rein/, .claude/: what later runs for everyone
	// using the directory, the operator's own git and rein included), are
	// then denied, not asked, unless an allow rule of the operator (source
	// user or workspace) names the host or path; the caller's own rules and
	// answers cannot lift them.
	Tenant bool
}

// settingsFile is the YAML shape: `permissions: {mode, allow, ask, deny}`.
type settingsFile struct {
	Permissions struct {
		Mode           string    `yaml:"mode"`
		Allow          []string  `yaml:"allow"`
		Ask            []string  `yaml:"ask"`
		Deny           []string  `yaml:"deny"`
		AskTimeout     yaml.Node `yaml:"ask_timeout"`
		SensitiveFiles []string  `yaml:"sensitive_files"`
	} `yaml:"permissions"`
}

// ParseSettings reads the `permissions:` section of a settings YAML
// document; other keys are ignored. Every rule gets Source src.
func ParseSettings(data []byte, src Source) (Settings, error) {
	var f settingsFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return Settings{}, fmt.Errorf("permission: settings: %w", err)
	}
	p := f.Permissions
	s := Settings{SensitiveFiles: p.SensitiveFiles}
	if p.Mode != "" {
		m, err := ParseMode(p.Mode)
		if err != nil {
			return Settings{}, err
		}
		s.Mode = m
	}
	d, err := parseTimeout(&p.AskTimeout)
	if err != nil {
		return Settings{}, err
	}
	s.AskTimeout = d
	for _, list := range []struct {
		action Decision
		rules  []string
	}{{DecisionDeny, p.Deny}, {DecisionAsk, p.Ask}, {DecisionAllow, p.Allow}} {
		for _, text := range list.rules {
			r, err := ParseRule(list.action, text)
			if err != nil {
				return Settings{}, fmt.Errorf("permission: settings: %s list: %w", list.action, err)
			}
			r.Source = src
			s.Rules = append(s.Rules, r)
		}
	}
	return s, nil
}

// parseTimeout reads ask_timeout as seconds (300) or a duration ("5m").
func parseTimeout(n *yaml.Node) (time.Duration, error) {
	if n.Kind == 0 {
		return 0, nil
	}
	bad := fmt.Errorf("permission: settings: ask_timeout %q: write seconds (300) or a duration (5m)", n.Value)
	if n.Kind != yaml.ScalarNode {
		return 0, bad
	}
	if n.Value == "" || n.Tag == "!!null" {
		return 0, nil
	}
	if secs, err := strconv.ParseFloat(n.Value, 64); err == nil {
		if secs < 0 || secs > 1e9 {
			return 0, bad
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil || d < 0 {
		return 0, bad
	}
	return d, nil
}

// LoadSettings reads a settings file; a missing file is empty settings.
func LoadSettings(path string, src Source) (Settings, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{}, nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("permission: %w", err)
	}
	s, err := ParseSettings(data, src)
	if err != nil {
		return Settings{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Merge combines layers given from the widest (user) to the narrowest
// (run): mode, timeout and store come from the last layer that sets them;
// rules and sensitive files add up (deny still wins whatever its layer).
func Merge(layers ...Settings) Settings {
	var out Settings
	for _, l := range layers {
		if l.Mode != "" {
			out.Mode = l.Mode
		}
		if l.AskTimeout > 0 {
			out.AskTimeout = l.AskTimeout
		}
		if l.Store != nil {
			out.Store = l.Store
		}
		out.SensitiveHidden = out.SensitiveHidden || l.SensitiveHidden
		out.Tenant = out.Tenant || l.Tenant
		out.Rules = append(out.Rules, l.Rules...)
		out.SensitiveFiles = append(out.SensitiveFiles, l.SensitiveFiles...)
	}
	return out
}

// RuleStore keeps rules beyond the current process, such as the answers
// "always allow". Add must be safe for concurrent use.
type RuleStore interface {
	Add(ctx context.Context, r Rule) error
}

// FileStore keeps rules in a settings YAML file, in the lists
// `permissions.allow|ask|deny`, leaving the rest of the file as it was. Each
// write goes to a temporary file renamed over the old one, so a crash never
// leaves half a file.
type FileStore struct {
	// Path is the settings file, created with its directory when missing.
	Path string
	mu   sync.Mutex
}

// Add appends the rule to its action's list unless it is already there.
func (s *FileStore) Add(ctx context.Context, r Rule) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	data, err := os.ReadFile(s.Path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("permission: %w", err)
	}
	var doc yaml.Node
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("permission: %s: %w", s.Path, err)
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("permission: %s: the document is not a mapping", s.Path)
	}
	perms, err := child(root, "permissions", yaml.MappingNode)
	if err != nil {
		return fmt.Errorf("permission: %s: %w", s.Path, err)
	}
	list, err := child(perms, string(r.Action), yaml.SequenceNode)
	if err != nil {
		return fmt.Errorf("permission: %s: %w", s.Path, err)
	}
	text := r.String()
	for _, n := range list.Content {
		if n.Value == text {
			return nil
		}
	}
	list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: text})
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return fmt.Errorf("permission: %s: %w", s.Path, err)
	}
	return writeAtomic(s.Path, out)
}

// child returns the value of key in a mapping, adding it (of kind) when
// missing.
func child(m *yaml.Node, key string, kind yaml.Kind) (*yaml.Node, error) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != key {
			continue
		}
		v := m.Content[i+1]
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			*v = yaml.Node{Kind: kind}
		}
		if v.Kind != kind {
			return nil, fmt.Errorf("%s has the wrong shape", key)
		}
		return v, nil
	}
	v := &yaml.Node{Kind: kind}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	return v, nil
}

// writeAtomic writes data to a temporary file next to path, syncs it and
// renames it over path, keeping path's mode when it exists.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("permission: %w", err)
	}
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("permission: %w", err)
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(name, mode)
	}
	if werr == nil {
		werr = os.Rename(name, path)
	}
	if werr != nil {
		_ = os.Remove(name)
		return fmt.Errorf("permission: write %s: %w", path, werr)
	}
	return nil
}
