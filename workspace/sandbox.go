package workspace

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/exec/egress"
)

// The sandbox's settings (SPEC TOOL-7) are written flat or as a section:
//
//	sandbox: workspace
//
//	sandbox:
//	  profile: workspace        # read-only, off
//	  network: allow-list       # off, on
//	  allow_hosts: [registries, "localhost:3000"]
//	  caches: shared            # isolated
//	  writable: [~/scratch]
//
// A workspace may only tighten the profile, trusted or not; what it brings
// that widens the network, the caches or the writable directories applies
// once the user trusted it (see gatedValue).

// sandboxProfile is the section's name for the Sandbox key.
const sandboxProfile = "sandbox.profile"

// SplitList returns the items of a KindList value.
func SplitList(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, "\n")
}

// checkList normalises a list: items split on Sep and new lines, trimmed,
// empty ones and repeats left out, each checked by Item.
func (k Key) checkList(v string) (string, error) {
	fields := strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || k.Sep != "" && strings.ContainsRune(k.Sep, r) })
	var out []string
	for _, f := range fields {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if k.Item != nil {
			n, err := k.Item(f)
			if err != nil {
				return "", err
			}
			f = n
		}
		if !contains(out, f) {
			out = append(out, f)
		}
	}
	return strings.Join(out, "\n"), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkHost checks an allow-list entry as the egress proxy reads it.
func checkHost(h string) (string, error) {
	if _, err := egress.ParseList([]string{h}); err != nil {
		return "", err
	}
	return h, nil
}

// checkWritable checks a writable directory: absolute, or under the home
// (~/…, expanded when the sandbox is built).
func checkWritable(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%s: %q holds a NUL byte", SandboxWritable, p)
	}
	if !(p == "~" || strings.HasPrefix(p, "~/") || filepath.IsAbs(p)) {
		return "", fmt.Errorf("%s: %q is not absolute: write /path or ~/path", SandboxWritable, p)
	}
	c := filepath.Clean(p)
	if c == "/" || c == "~" || !(strings.HasPrefix(c, "~/") || filepath.IsAbs(c)) {
		return "", fmt.Errorf("%s: %q would make everything (or the whole home) writable; name the directories a tool needs, or set sandbox: off", SandboxWritable, p)
	}
	return c, nil
}
