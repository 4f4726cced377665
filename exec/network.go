package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/reinhq/rein/exec/egress"
	"github.com/reinhq/rein/exec/helper"
)

// egressRun is the egress wiring of one command: the gate rein serves for
// it, the socket's host path, and what the helper forwards inside.
type egressRun struct {
	gate    *egress.Gate
	hostDir string
	fwd     helper.Forward
}

// openEgress opens the command's gate when the sandbox has no network but
// an allow-list; nil when there is nothing to carry.
func (s *Sandbox) openEgress() (*egressRun, error) {
	if s.AllowNetwork || s.Egress == nil || s.Egress.Allow.Empty() {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "rein-egress-")
	if err != nil {
		return nil, fmt.Errorf("egress socket: %w", err)
	}
	g, err := s.Egress.Open(filepath.Join(dir, "s"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	e := &egressRun{gate: g, hostDir: dir, fwd: helper.Forward{Socket: egressSocket, Proxy: true}}
	for _, t := range s.Egress.Allow.Loopback() {
		host := t.Name
		if host == "" {
			host = t.Addr.String()
		}
		e.fwd.Mirrors = append(e.fwd.Mirrors, mirrorAddr(host, t.Port))
	}
	return e, nil
}

// args are bubblewrap's options that bind the gate's socket into the
// sandbox.
func (e *egressRun) args() []string {
	if e == nil {
		return nil
	}
	return []string{"--bind", filepath.Join(e.hostDir, "s"), egressSocket}
}

// close stops the gate and removes its socket.
func (e *egressRun) close() {
	if e == nil {
		return
	}
	e.gate.Close()
	os.RemoveAll(e.hostDir)
}

// notes say which connections the gate refused and the setting that allows
// each.
func (e *egressRun) notes() []string {
	if e == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, d := range e.gate.Denials() {
		if seen[d.Target] {
			continue
		}
		seen[d.Target] = true
		out = append(out, fmt.Sprintf("the network was refused for %s (%s); to allow it, add %s to %s in your settings (or REIN_SANDBOX_ALLOW_HOSTS), or set %s: %s for every host"+escapeHint,
			d.Target, d.Reason, strconv.Quote(allowEntry(d.Target)), SettingAllowHosts, SettingNetwork, NetworkOn))
	}
	return out
}

// allowEntry is the allow-list entry that admits target: the host alone
// for ports 80 and 443, host:port otherwise.
func allowEntry(target string) string {
	t, err := egress.ParseTarget(target, 0)
	if err != nil {
		return target
	}
	if t.Name != "" && (t.Port == 80 || t.Port == 443) {
		return t.Name
	}
	return t.String()
}

// EgressHint is the Hint a sandbox's egress.Proxy gives in every refusal,
// naming the settings that widen the network.
const EgressHint = "To allow it, add the host to " + SettingAllowHosts + " in your settings (or REIN_SANDBOX_ALLOW_HOSTS; \"" +
	egress.Registries + "\" stands for the package registries), or set " + SettingNetwork + ": " + NetworkOn + "."
