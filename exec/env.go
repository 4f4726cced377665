package exec

import (
	"os"
	"strings"
)

// DefaultPassEnv names the variables a command inherits from rein's own
// environment. Everything else (API keys, tokens) stays out unless a call
// passes it in Command.Env.
var DefaultPassEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE",
	"TZ", "TMPDIR",
}

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// baseEnv builds a command's environment: the pass-through variables read
// from the process environment now (never written), fixed settings that keep
// programs from waiting on a terminal, then extra in order. Later entries win,
// as os/exec keeps the last value of a duplicated key.
func baseEnv(pass []string, extra ...[]string) []string {
	if pass == nil {
		pass = DefaultPassEnv
	}
	env := make([]string, 0, len(pass)+8)
	for _, k := range pass {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if !hasKey(env, "PATH") {
		env = append(env, "PATH="+defaultPath)
	}
	if unsafeCharset(env) {
		// In Big5, GBK, GB18030 or Shift-JIS a byte of a character can be
		// \ or |: bash would split words where the permission analysis,
		// which reads UTF-8, does not (SPEC PERM-6).
		env = append(env, "LC_ALL=C.UTF-8")
	}
	// No colours or pagers; git and ssh must fail rather than prompt.
	env = append(env, "TERM=dumb", "NO_COLOR=1", "PAGER=cat", "GIT_PAGER=cat",
		"GIT_TERMINAL_PROMPT=0")
	for _, e := range extra {
		env = append(env, e...)
	}
	return env
}

// unsafeCharset reports a locale whose character set has multibyte
// characters with ASCII bytes in them, as the locale variables rank: LC_ALL,
// then LC_CTYPE, then LANG.
func unsafeCharset(env []string) bool {
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		for _, kv := range env {
			v, ok := strings.CutPrefix(kv, k+"=")
			if !ok || v == "" {
				continue
			}
			v = strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(v, "-", ""), "_", ""))
			for _, cs := range []string{"big5", "gbk", "gb18030", "sjis", "shiftjis", "johab", "cp932", "cp936", "cp949", "cp950"} {
				if strings.Contains(v, cs) {
					return true
				}
			}
			return false
		}
	}
	return false
}

func hasKey(env []string, key string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, key+"=") {
			return true
		}
	}
	return false
}
