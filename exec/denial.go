package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// What a denial looks like in a command's output: the messages of the C
// library, Go, Node and the shells for a write to a read-only mount or a
// file Landlock refuses, and for a network that is not there.
var (
	quotedRE    = regexp.MustCompile("['\"`‘’“”]([^'\"`‘’“”]+)['\"`‘’“”]")
	loopbackRE  = regexp.MustCompile(`(?:127\.0\.0\.1|localhost|\[::1\]|::1)(?:[:.]|\s+port\s+)(\d{1,5})`)
	readOnlyMsg = []string{"read-only file system", "erofs"}
	deniedMsg   = []string{"permission denied", "eacces", "operation not permitted", "eperm"}
	noNetMsg    = []string{"could not resolve host", "temporary failure in name resolution", "enotfound", "eai_again",
		"network is unreachable", "no such host", "name or service not known", "getaddrinfo", "failed to resolve"}
	refusedMsg = []string{"connection refused", "econnrefused", "couldn't connect to server", "failed to connect to"}
)

// escapeHint ends a note about what a setting would allow: the model's
// other way, one command outside the sandbox, approved by the user.
const escapeHint = "; or, if the task needs it now, run this one command again with unsandboxed: true (the user must approve it)"

// maxExplained bounds the notes one command's denials get.
const maxExplained = 4

// explain reads a failed command's output for what the sandbox refused
// and returns a note for each: the path or host, and the exact setting
// that would allow it, or that none does (a protected path) — so neither
// the model nor the user has to guess (SPEC TOOL-7).
func (s *Sandbox) explain(out Output, dir string, proxied bool) []string {
	if out.ExitCode == 0 && !out.TimedOut {
		return nil
	}
	text := out.Combined
	if out.Truncated {
		text = append(slices.Clone(text), out.Tail...)
	}
	var notes []string
	seen := map[string]bool{}
	add := func(key, note string) {
		if !seen[key] && len(notes) < maxExplained {
			seen[key] = true
			notes = append(notes, note)
		}
	}
	for _, line := range strings.Split(string(text), "\n") {
		low := strings.ToLower(line)
		switch {
		case containsAny(low, readOnlyMsg), containsAny(low, deniedMsg):
			m := deniedPath(line, low)
			if m == "" {
				continue
			}
			if !filepath.IsAbs(m) {
				m = filepath.Join(dir, m)
			}
			m = filepath.Clean(m)
			if seen[m] {
				continue
			}
			if n := s.explainPath(m, containsAny(low, readOnlyMsg)); n != "" {
				add(m, n)
			}
		case !s.AllowNetwork && containsAny(low, refusedMsg):
			if m := loopbackRE.FindStringSubmatch(line); m != nil {
				add("refused "+m[1], fmt.Sprintf("a connection to port %s of loopback was refused: loopback in the sandbox is the sandbox's own, "+
					"so a server on the host is not there (one started by this command is); to reach the host's, add \"localhost:%s\" to %s in your settings (or REIN_SANDBOX_ALLOW_HOSTS)"+escapeHint,
					m[1], m[1], SettingAllowHosts))
			}
		case !s.AllowNetwork && containsAny(low, noNetMsg):
			how := fmt.Sprintf("the sandbox has no network: to reach a host, add it to %s in your settings (or REIN_SANDBOX_ALLOW_HOSTS; %q stands for the package registries), or set %s: %s",
				SettingAllowHosts, "registries", SettingNetwork, NetworkOn)
			if proxied {
				how = "the sandbox has no network but its proxy (HTTP_PROXY, HTTPS_PROXY), which this program seems not to use; configure it to use the proxy, or set " +
					SettingNetwork + ": " + NetworkOn
			}
			add("network", how+escapeHint)
		}
	}
	return notes
}

// deniedPath finds the path a denial message names: the word before
// "Read-only file system" or "Permission denied" (perror's "PATH: reason",
// Go's "open PATH: reason", "cannot touch 'PATH': reason"), else the first
// quoted one after it (Node's "EROFS: read-only file system, mkdir 'PATH'").
func deniedPath(line, low string) string {
	at := -1
	for _, m := range append(slices.Clone(readOnlyMsg), deniedMsg...) {
		if i := strings.Index(low, m); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 {
		return ""
	}
	before := strings.TrimRight(line[:at], " :")
	if i := strings.LastIndexAny(before, " \t"); i >= 0 {
		before = before[i+1:]
	}
	before = strings.Trim(before, "'\"`‘’“”")
	if strings.ContainsRune(before, '/') {
		return before
	}
	if m := quotedRE.FindStringSubmatch(line[at:]); m != nil && strings.ContainsRune(m[1], '/') {
		return m[1]
	}
	if before != "" && strings.Trim(before, "0123456789") != "" && !strings.EqualFold(before, "error") {
		return before
	}
	return ""
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// explainPath says why the sandbox refused path, and what would allow it;
// "" when the sandbox did not refuse it (the file's own permissions did).
func (s *Sandbox) explainPath(path string, readOnly bool) string {
	if s.hidden(path) {
		return fmt.Sprintf("%s is a sensitive file the sandbox hides; it stays hidden in every profile (the permission settings' sensitive_files decide which)", path)
	}
	real, err := ResolveExisting(path)
	if err != nil {
		real = path
	}
	writable := s.writableDirs()
	for _, w := range writable {
		if within(w, real) {
			rel, _ := filepath.Rel(w, real)
			if protectedRel(rel) || homeProtected(real) {
				return fmt.Sprintf("%s is protected: the sandbox keeps git's config and hooks, .rein, .claude and credentials read-only in every profile, and no setting widens that", path)
			}
			if s.Profile == ProfileReadOnly {
				return fmt.Sprintf("the sandbox's profile is read-only, so %s cannot be written; to let commands write the workspace, set %s: %s in your settings (or REIN_SANDBOX=%s)"+escapeHint,
					path, SettingProfile, ProfileWorkspace, ProfileWorkspace)
			}
			return "" // writable: the file's own permissions refused it
		}
	}
	if s.TempDir != "" && within(filepath.Clean(s.TempDir), real) {
		return ""
	}
	if s.Profile != ProfileReadOnly && withinAny(s.Caches.Dirs, real) {
		return ""
	}
	if !readOnly && !s.onReadOnlyMount(real) {
		return "" // a permission error outside the sandbox's doing
	}
	if s.Profile == ProfileReadOnly {
		return fmt.Sprintf("the sandbox's profile is read-only: only $TMPDIR (the session's temporary directory) is writable, not %s; set %s: %s in your settings (or REIN_SANDBOX=%s) to let commands write the workspace and the toolchain caches"+escapeHint,
			path, SettingProfile, ProfileWorkspace, ProfileWorkspace)
	}
	dir := nearestDir(real)
	if home, err := os.UserHomeDir(); dir == "/" || err == nil && dir == filepath.Clean(home) {
		// Never offer the whole system or home: output is the command's,
		// and it may name any path.
		return fmt.Sprintf("the sandbox keeps %s read-only: commands may write the workspace, $TMPDIR (the session's temporary directory) and the toolchain caches; to let them write elsewhere, add the directory a tool needs (not %s itself) to %s in your settings (or REIN_SANDBOX_WRITABLE)"+escapeHint,
			path, dir, SettingWritable)
	}
	return fmt.Sprintf("the sandbox keeps %s read-only: commands may write the workspace, $TMPDIR (the session's temporary directory) and the toolchain caches; to let them write %s, add it to %s in your settings (or REIN_SANDBOX_WRITABLE)"+escapeHint,
		path, dir, SettingWritable)
}

// homeProtected reports whether p is one of the user's HomeProtected
// paths, or inside one.
func homeProtected(p string) bool {
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) || !within(home, p) {
		return false
	}
	rel, _ := filepath.Rel(home, p)
	rel = filepath.ToSlash(rel)
	for _, h := range HomeProtected {
		if rel == h || strings.HasPrefix(rel, h+"/") {
			return true
		}
	}
	return false
}

// onReadOnlyMount reports whether p is outside every directory the
// sandbox binds writable, where a permission error is the sandbox's.
func (s *Sandbox) onReadOnlyMount(p string) bool {
	return !within("/tmp", p) && !within("/dev", p) && !within("/proc", p)
}

// nearestDir is the deepest existing directory at or above p (p's parent
// when p is a file).
func nearestDir(p string) string {
	for d := p; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
		if d == filepath.Dir(d) {
			return d
		}
	}
}
