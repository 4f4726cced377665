package cli

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/discord"
	"github.com/reinhq/rein/gateway/feishu"
	"github.com/reinhq/rein/gateway/slack"
	"github.com/reinhq/rein/gateway/telegram"
	"github.com/reinhq/rein/gateway/webhook"
)

// gatewayFile is the gateway's configuration file (gateway.yaml).
type gatewayFile struct {
	// Listen is where the channels that receive over HTTP (Slack, Feishu,
	// the webhook) are served.
	Listen  string               `yaml:"listen"`
	DataDir string               `yaml:"data_dir"`
	Idle    time.Duration        `yaml:"idle_after"`
	Persona *bool                `yaml:"persona"`
	Chans   map[string]yaml.Node `yaml:"channels"`
}

// gatewayChannel is what every channel's entry holds beside its
// platform's own keys.
type gatewayChannel struct {
	Type           string   `yaml:"type"`
	Allow          []string `yaml:"allow"`
	PermissionMode string   `yaml:"permission_mode"`
	Model          string   `yaml:"model"`
	Workspace      string   `yaml:"workspace"`
}

// channelTypes builds a channel of each type from its entry; the
// platform's keys decode into its package's Config.
var channelTypes = map[string]func(name string, node *yaml.Node, getenv func(string) string) (gateway.Channel, []string, error){
	"webhook":  build(webhook.New),
	"telegram": build(telegram.New),
	"slack":    build(slack.New),
	"feishu":   build(feishu.New),
	"discord":  build(discord.New),
}

// build adapts a channel package's New to channelTypes: it decodes the
// entry into the package's Config and reports the keys it knows.
func build[C any, Ch gateway.Channel](newCh func(string, C, func(string) string) (Ch, error)) func(string, *yaml.Node, func(string) string) (gateway.Channel, []string, error) {
	return func(name string, node *yaml.Node, getenv func(string) string) (gateway.Channel, []string, error) {
		var cfg C
		if err := node.Decode(&cfg); err != nil {
			return nil, nil, err
		}
		ch, err := newCh(name, cfg, getenv)
		if err != nil {
			return nil, nil, err
		}
		return ch, yamlKeys(reflect.TypeOf(cfg)), nil
	}
}

// yamlKeys are the yaml keys of a struct type.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
			keys = append(keys, k)
		}
	}
	return keys
}

// loadGatewayFile reads and checks the gateway's file, and builds its
// channels; every error names the key to fix.
func (a *App) loadGatewayFile(path string) (*gatewayFile, []gateway.Route, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil, usageErrorf("%s does not exist: write it (see rein gateway --help for an example) or pass --config", path)
	}
	if err != nil {
		return nil, nil, usageErrorf("%v", err)
	}
	var f gatewayFile
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, nil, usageErrorf("%s: %v", path, err)
	}
	if len(f.Chans) == 0 {
		return nil, nil, usageErrorf("%s: no channels: add one under channels: (see rein gateway --help)", path)
	}
	names := make([]string, 0, len(f.Chans))
	for n := range f.Chans {
		names = append(names, n)
	}
	slices.Sort(names)
	var routes []gateway.Route
	for _, name := range names {
		node := f.Chans[name]
		var common gatewayChannel
		if err := node.Decode(&common); err != nil {
			return nil, nil, usageErrorf("%s: channels.%s: %v", path, name, err)
		}
		mk := channelTypes[common.Type]
		if mk == nil {
			return nil, nil, usageErrorf("%s: channels.%s.type %q: want one of %s", path, name, common.Type, strings.Join(slices.Sorted(maps.Keys(channelTypes)), ", "))
		}
		ch, keys, err := mk(name, &node, a.getenv)
		if err != nil {
			return nil, nil, usageErrorf("%s: channels.%s: %v", path, name, err)
		}
		if err := checkKeys(&node, append(keys, yamlKeys(reflect.TypeOf(common))...)); err != nil {
			return nil, nil, usageErrorf("%s: channels.%s: %v", path, name, err)
		}
		if err := gateway.CheckPermissionMode(common.PermissionMode); err != nil {
			return nil, nil, usageErrorf("%s: channels.%s: %v", path, name, err)
		}
		if len(common.Allow) == 0 {
			fmt.Fprintf(a.Stderr, "rein: channels.%s has no allow: list, so it refuses everyone and tells each their user id; add yours\n", name)
		}
		ws := common.Workspace
		if ws != "" {
			if ws, err = a.expandDir(ws); err != nil {
				return nil, nil, usageErrorf("%s: channels.%s.workspace: %v", path, name, err)
			}
		}
		routes = append(routes, gateway.Route{Channel: ch, Allow: common.Allow, PermissionMode: common.PermissionMode,
			Model: common.Model, Workspace: ws})
	}
	return &f, routes, nil
}

// checkKeys refuses a key of a mapping node that is not in known (a typo
// would silently do nothing).
func checkKeys(node *yaml.Node, known []string) error {
	if node.Kind != yaml.MappingNode {
		return fmt.Errorf("want a mapping of settings")
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if k := node.Content[i].Value; !slices.Contains(known, k) {
			slices.Sort(known)
			return fmt.Errorf("unknown key %q (line %d): the keys are %s", k, node.Content[i].Line, strings.Join(known, ", "))
		}
	}
	return nil
}

// expandDir makes a workspace directory absolute (~ is the home
// directory) and checks that it is one.
func (a *App) expandDir(dir string) (string, error) {
	if dir == "~" || strings.HasPrefix(dir, "~/") {
		dir = filepath.Join(a.getenv("HOME"), strings.TrimPrefix(dir, "~"))
	}
	dir = a.abs(dir)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("%s: %v (create the directory first)", dir, err)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return real, nil
}
