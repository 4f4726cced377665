// Package secretenv keeps the secrets of rein's environment (provider keys,
// tokens, passwords) out of reach of the programs rein runs (SPEC PERM-5,
// TOOL-4): at start-up, [Scrub] takes a private snapshot of the environment
// for rein's own use, removes the secrets from the process environment so
// no child inherits them, overwrites the environment block the kernel
// shows in /proc/PID/environ (Go's os.Unsetenv leaves it as it was), and
// makes the process non-dumpable, so processes of the same user cannot read
// its /proc/PID/environ or mem.
//
// What stays possible: a process with CAP_SYS_PTRACE (root, when rein runs
// as root outside a sandbox) can still read rein's memory, where the keys
// live for rein's own requests. The bubblewrap sandbox hides rein entirely
// (its own PID namespace); Landlock refuses access to rein's memory even to
// root.
package secretenv

import (
	"os"
	"slices"
	"strings"
)

// ProviderCredentials are the variables rein reads its own model
// credentials from: the providers' keys and OAuth tokens (every built-in
// profile's api_key_env among them) and Bedrock's model-access token. A
// workspace's declarations may never name them (SPEC MCP-2).
var ProviderCredentials = []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
	"OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
	"OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "MISTRAL_API_KEY", "GROQ_API_KEY", "XAI_API_KEY",
	"AWS_BEARER_TOKEN_BEDROCK",
}

// KnownSecrets are variables holding provider keys and tokens, secret
// whatever their name's pattern (see [IsSecret]): [ProviderCredentials]
// and other services' tokens.
var KnownSecrets = append(slices.Clone(ProviderCredentials),
	"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "HF_TOKEN", "NPM_TOKEN")

// IsSecret reports whether a variable is a secret by its name: one of
// [KnownSecrets], or a name ending in _KEY, _TOKEN or _PAT, or holding
// APIKEY, SECRET, PASSWORD or PASSWD (any case).
func IsSecret(name string) bool {
	n := strings.ToUpper(name)
	if slices.Contains(KnownSecrets, n) {
		return true
	}
	for _, suffix := range []string{"_KEY", "_TOKEN", "_PAT"} {
		if strings.HasSuffix(n, suffix) {
			return true
		}
	}
	for _, part := range []string{"APIKEY", "SECRET", "PASSWORD", "PASSWD"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// Snapshot is the environment rein started with, secrets included, for
// rein's own use (configuration, provider keys). Nothing in it is shared
// with the process environment.
type Snapshot struct {
	vars map[string]string
	list []string
}

// Take copies the process environment now.
func Take() *Snapshot {
	s := &Snapshot{vars: map[string]string{}}
	for _, kv := range os.Environ() {
		kv = strings.Clone(kv) // the runtime's strings point into the environment block
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if _, dup := s.vars[k]; !dup {
			s.list = append(s.list, kv)
		}
		s.vars[k] = v
	}
	return s
}

// Getenv returns a variable's value, "" when unset.
func (s *Snapshot) Getenv(key string) string { return s.vars[key] }

// LookupEnv returns a variable's value and whether it is set.
func (s *Snapshot) LookupEnv(key string) (string, bool) {
	v, ok := s.vars[key]
	return v, ok
}

// Environ returns the snapshot as KEY=value lines, in the original order.
func (s *Snapshot) Environ() []string { return slices.Clone(s.list) }

// Report says what Scrub did.
type Report struct {
	// Removed names the secrets taken out of the process environment.
	Removed []string
	// Overwritten is the size of the environment block overwritten.
	Overwritten int
	// NonDumpable says the process was made non-dumpable.
	NonDumpable bool
}

// Scrub snapshots the environment, then removes the secrets from the
// process environment and rebuilds it from fresh copies of the rest (so
// nothing refers to the original block any more), overwrites the whole
// original block with zeros — every value, secret or not: rein keeps its
// snapshot, and /proc/PID/environ then shows nothing — and makes the
// process non-dumpable. Call it first in main, before any goroutine reads
// the environment. On systems other than Linux only the environment is
// cleaned. The error reports a step that failed; the snapshot is valid
// whatever it says.
func Scrub() (*Snapshot, Report, error) {
	snap := Take()
	var rep Report
	os.Clearenv()
	for _, kv := range snap.list {
		k, v, _ := strings.Cut(kv, "=")
		if IsSecret(k) {
			rep.Removed = append(rep.Removed, k)
			continue
		}
		os.Setenv(k, v)
	}
	n, err := overwriteEnvBlock()
	rep.Overwritten = n
	if derr := setNonDumpable(); derr == nil {
		rep.NonDumpable = nonDumpable()
	} else if err == nil {
		err = derr
	}
	return snap, rep, err
}
