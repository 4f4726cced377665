package hook

import (
	"os"
	"regexp"
	"slices"
	"sync"
)

// BaseEnv names the variables every command hook gets from rein's
// environment: where programs are, who and where the user is, the locale,
// the terminal and the desktop session (for notifications). Provider keys,
// tokens and everything else stay out unless the hook names them (SPEC
// PERM-5).
var BaseEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
	"TZ", "TMPDIR", "TERM", "COLORTERM", "NO_COLOR",
	"XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME",
	"DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS",
}

// defaultPath is PATH when rein's environment has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// envName is a variable name a hook may list.
var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// lookupFunc returns getenv, or the process environment when nil.
func lookupFunc(getenv func(string) string) func(string) string {
	if getenv != nil {
		return getenv
	}
	return os.Getenv
}

// CleanEnv builds the environment of a command rein starts for a
// declaration it does not otherwise trust with its own (a command hook, an
// MCP server): [BaseEnv] and the names it passes, read through getenv
// (empty values are left out; nil reads the process's), then extra
// KEY=value pairs, which win.
func CleanEnv(getenv func(string) string, pass []string, extra ...string) []string {
	get := lookupFunc(getenv)
	env := make([]string, 0, len(BaseEnv)+len(pass)+len(extra)+1)
	seen := map[string]bool{}
	for _, k := range slices.Concat(BaseEnv, pass) {
		if seen[k] {
			continue
		}
		seen[k] = true
		if v := get(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	if get("PATH") == "" {
		env = append(env, "PATH="+defaultPath)
	}
	return append(env, extra...)
}

// varRef is a reference to a variable in a header value: $NAME or ${NAME}.
var varRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))`)
})

// expandHeader replaces the variables a header value refers to: those the
// hook names (allowed) with their values, any other with nothing, as
// Claude Code does — a header never carries a secret the hook did not ask
// for.
func expandHeader(v string, allowed []string, getenv func(string) string) string {
	get := lookupFunc(getenv)
	return varRef().ReplaceAllStringFunc(v, func(ref string) string {
		m := varRef().FindStringSubmatch(ref)
		name := m[1] + m[2]
		if !slices.Contains(allowed, name) {
			return ""
		}
		return get(name)
	})
}
