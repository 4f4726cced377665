package exec

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/exec/egress"
)

// Policy is the sandbox a run gets, as its settings resolve (SPEC TOOL-7):
// what [Policy.Configure] builds a Sandbox from, and what `rein doctor`
// shows ([Policy.Describe]).
type Policy struct {
	// Profile is workspace, read-only or off.
	Profile Profile
	// Required says bubblewrap must run (sandbox: on, or read-only, which
	// Landlock alone cannot give): no weaker fallback.
	Required bool
	// Network is NetworkOff, NetworkAllowList or NetworkOn.
	Network string
	// AllowHosts is the allow-list (egress.ParseList's entries).
	AllowHosts []string
	// Caches is CachesShared or CachesIsolated.
	Caches string
	// Writable are more writable directories: absolute, or ~/….
	Writable []string
}

// PolicyOf reads the settings' values: sandbox (workspace, read-only, on,
// auto, off), sandbox.network, sandbox.allow_hosts, sandbox.caches and
// sandbox.writable. A bad value is an error naming the setting.
func PolicyOf(sandbox, network string, hosts []string, caches string, writable []string) (Policy, error) {
	p := Policy{Network: network, AllowHosts: hosts, Caches: caches, Writable: writable}
	switch sandbox {
	case "", "auto", string(ProfileWorkspace):
		p.Profile = ProfileWorkspace
	case "on":
		p.Profile, p.Required = ProfileWorkspace, true
	case string(ProfileReadOnly):
		p.Profile, p.Required = ProfileReadOnly, true
	case string(ProfileOff):
		p.Profile = ProfileOff
	default:
		return Policy{}, fmt.Errorf("%s: %q: want workspace, read-only, on, auto or off", SettingProfile, sandbox)
	}
	switch network {
	case "":
		p.Network = NetworkAllowList
	case NetworkOff, NetworkAllowList, NetworkOn:
	default:
		return Policy{}, fmt.Errorf("%s: %q: want %s, %s or %s", SettingNetwork, network, NetworkAllowList, NetworkOff, NetworkOn)
	}
	if _, err := egress.ParseList(hosts); err != nil {
		return Policy{}, err
	}
	if p.Caches == "" {
		p.Caches = CachesShared
	}
	if p.Caches != CachesShared && p.Caches != CachesIsolated {
		return Policy{}, fmt.Errorf("%s: %q: want %s or %s", SettingCaches, caches, CachesShared, CachesIsolated)
	}
	return p, nil
}

// Configure sets s up as the policy says: its profile, the toolchain
// caches (the user's under home, or the workspace's own under the user's
// cache directory), the extra writable directories (~ is home), and the
// network — the host's for on, an egress proxy for a non-empty allow-list,
// none otherwise. s.Workspace must be set.
func (p Policy) Configure(s *Sandbox, home string, getenv func(string) string) error {
	if p.Profile == ProfileOff {
		return fmt.Errorf("%s: off: commands run on the host, not in a sandbox", SettingProfile)
	}
	s.Profile = p.Profile
	if p.Profile == ProfileWorkspace {
		c, err := ToolchainCaches(p.Caches, home, getenv, IsolatedCacheRoot(userCacheDir(home, getenv), s.Workspace))
		if err != nil {
			return err
		}
		s.Caches = c
		for _, w := range p.Writable {
			s.Writable = append(s.Writable, expandHome(w, home))
		}
	}
	switch p.Network {
	case NetworkOn:
		s.AllowNetwork = true
	case NetworkAllowList:
		if len(p.AllowHosts) > 0 {
			list, err := egress.ParseList(p.AllowHosts)
			if err != nil {
				return err
			}
			s.Egress = &egress.Proxy{Allow: list, Hint: EgressHint}
		}
	}
	return nil
}

// Describe says, a line each, what the policy lets a command do: the
// profile, what it may write, the network, and what stays protected.
func (p Policy) Describe(s *Sandbox) []string {
	if p.Profile == ProfileOff {
		return []string{"profile off: commands run on the host, unconfined: they may write and reach whatever you may"}
	}
	req := "bubblewrap, with Landlock inside where the kernel has it; Landlock alone (weaker) or the host, with a warning, where bubblewrap cannot run"
	if p.Required {
		req = "bubblewrap required: commands fail rather than run less confined"
	}
	lines := []string{fmt.Sprintf("profile %s (%s)", p.Profile, req)}
	tmp := "a fresh directory per command"
	if s != nil && s.TempDir != "" {
		tmp = s.TempDir
	}
	if p.Profile == ProfileReadOnly {
		lines = append(lines, "writable: only $TMPDIR ("+tmp+"); the workspace and the caches are read-only")
	} else {
		ws, caches, more := "", "", ""
		if s != nil {
			ws = " (" + s.Workspace + ")"
			if len(s.Caches.Dirs) > 0 {
				caches = ": " + strings.Join(s.Caches.Dirs, ", ")
			}
			if len(s.Writable) > 0 {
				more = "; " + SettingWritable + ": " + strings.Join(s.Writable, ", ")
			}
		}
		lines = append(lines, "writable: the workspace"+ws+", $TMPDIR ("+tmp+"), the toolchain caches ("+p.Caches+caches+")"+more)
	}
	switch {
	case p.Network == NetworkOn:
		lines = append(lines, "network: on — every host ("+SettingNetwork+")")
	case p.Network == NetworkOff || len(p.AllowHosts) == 0:
		lines = append(lines, fmt.Sprintf("network: none (%s: %s, %s empty); loopback is the sandbox's own", SettingNetwork, p.Network, SettingAllowHosts))
	default:
		lines = append(lines, "network: only "+strings.Join(p.AllowHosts, ", ")+", through rein's egress proxy (HTTP_PROXY, HTTPS_PROXY); listed loopback ports are mirrored")
	}
	return append(lines, "protected in every profile: git's config and hooks, .rein, .claude, sensitive files and credentials (hidden), the host's D-Bus and container sockets")
}

// userCacheDir is XDG_CACHE_HOME, else ~/.cache.
func userCacheDir(home string, getenv func(string) string) string {
	if getenv != nil {
		if d := getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
			return d
		}
	}
	return filepath.Join(home, ".cache")
}

func expandHome(p, home string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
		return filepath.Join(home, rest)
	}
	return p
}
