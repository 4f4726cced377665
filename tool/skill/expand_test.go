package skill

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testVars allows HOME_DIR and NESTED from the environment; SECRET exists
// but is not allowed, so Env does not return it.
func testVars() Vars {
	env := map[string]string{
		"HOME_DIR": "/home/ada",
		"NESTED":   "${env:SECRET}",
		"EMPTY":    "",
		"DOLLAR":   "$(rm -rf /) `id` ${runtime:session_id}",
	}
	return Vars{
		Env: func(name string) (string, bool) {
			v, ok := env[name]
			return v, ok
		},
		Config: func(key string) (string, bool) {
			switch key {
			case "model":
				return "claude-sonnet-4-5", true
			case "permissions.mode":
				return "default", true
			case "loop":
				return "${config:loop}", true
			}
			return "", false
		},
		Runtime: map[string]string{"session_id": "s1", "skill_dir": "/ws/.rein/skills/pdf", "os": "linux",
			"evil": "${env:HOME_DIR}"},
	}
}

func TestExpand_SKILL1(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"no reference", "plain text", "plain text"},
		{"empty", "", ""},
		{"env", "home is ${env:HOME_DIR}.", "home is /home/ada."},
		{"config", "model ${config:model}, mode ${config:permissions.mode}", "model claude-sonnet-4-5, mode default"},
		{"runtime", "run python ${runtime:skill_dir}/scripts/x.py on ${runtime:os}", "run python /ws/.rein/skills/pdf/scripts/x.py on linux"},
		{"adjacent", "${runtime:os}${runtime:session_id}", "linuxs1"},
		{"empty value", "[${env:EMPTY}]", "[]"},
		{"not allowed", "key: ${env:SECRET}", "key: [env:SECRET not available]"},
		{"unknown config", "${config:nope}", "[config:nope not available]"},
		{"unknown runtime", "${runtime:nope}", "[runtime:nope not available]"},
		{"nested value not expanded again", "x=${env:NESTED}", "x=${env:SECRET}"},
		{"recursive config value", "${config:loop}", "${config:loop}"},
		{"runtime value naming env", "${runtime:evil}", "${env:HOME_DIR}"},
		{"shell in value stays text", "${env:DOLLAR}", "$(rm -rf /) `id` ${runtime:session_id}"},
		{"invalid env name", "${env:1X}", "[env:1X not available]"},
		{"env name with dot", "${env:A.B}", "[env:A.B not available]"},
		{"unterminated", "a ${env:HOME_DIR b", "a ${env:HOME_DIR b"},
		{"unterminated at end", "${env:", "${env:"},
		{"lone ${", "${", "${"},
		{"empty name", "${env:}", "${env:}"},
		{"unknown kind", "${secret:HOME_DIR}", "${secret:HOME_DIR}"},
		{"upper-case kind", "${ENV:HOME_DIR}", "${ENV:HOME_DIR}"},
		{"shell variable", "echo ${HOME} $HOME ${x:-default} ${#arr[@]}", "echo ${HOME} $HOME ${x:-default} ${#arr[@]}"},
		{"shell default that looks close", "${env:-x}", "${env:-x}"},
		{"shell default of $config", "${config:-/etc/x.conf} ${runtime:.x}", "${config:-/etc/x.conf} ${runtime:.x}"},
		{"space in name", "${env:HOME DIR}", "${env:HOME DIR}"},
		{"nested reference", "${env:${env:HOME_DIR}}", "${env:/home/ada}"},
		{"brace in the way", "${env:A{B}", "${env:A{B}"},
		{"dollar before", "$${env:HOME_DIR}", "$/home/ada"},
		{"too long a name", "${env:" + strings.Repeat("A", 200) + "}", "${env:" + strings.Repeat("A", 200) + "}"},
		{"unicode around", "é ${runtime:os} 日本", "é linux 日本"},
		{"many", strings.Repeat("${runtime:os}-", 3), "linux-linux-linux-"},
	}
	v := testVars()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, Expand(c.in, v)); diff != "" {
				t.Errorf("Expand(%q) -want +got:\n%s", c.in, diff)
			}
		})
	}
}

// With no sources at all, every reference becomes a marker.
func TestExpandNoSources_SKILL1(t *testing.T) {
	got := Expand("${env:HOME} ${config:model} ${runtime:os}", Vars{})
	want := "[env:HOME not available] [config:model not available] [runtime:os not available]"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// An unterminated ${ repeated many times must not take quadratic time; the
// search for the brace is bounded. (No wall-clock assertion: this only has
// to finish.)
func TestExpandUnterminatedMany_SKILL1(t *testing.T) {
	in := strings.Repeat("${env:A", 100_000)
	if got := Expand(in, testVars()); got != in {
		t.Errorf("changed an input with no complete reference")
	}
}

// FuzzExpand: never panics; text without ${ is returned as is; and a value
// is never expanded again: with env S = LEAK and every other allowed name
// holding ${env:S}, LEAK appears only when the input names S or holds LEAK.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"", "${env:A}", "${env:S}", "${env:${env:A}}", "${config:model}", "${runtime:x}",
		"${", "${env:", "$${env:A}}", "${HOME}", "${x:-y}", "${env:A}${env:B}", "\xff${runtime:\x00}"} {
		f.Add(s)
	}
	v := Vars{
		Env: func(name string) (string, bool) {
			if name == "S" {
				return "LEAK", true
			}
			return "${env:S}", true
		},
		Config:  func(string) (string, bool) { return "${env:S}", true },
		Runtime: map[string]string{"x": "${env:S}"},
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Expand(s, v)
		if !strings.Contains(s, "${") && got != s {
			t.Fatalf("Expand(%q) = %q, want it unchanged", s, got)
		}
		if !strings.Contains(s, "${env:S}") && !strings.Contains(s, "LEAK") && strings.Contains(got, "LEAK") {
			t.Fatalf("Expand(%q) = %q: a substituted value was expanded again", s, got)
		}
		if marked := Expand(s, Vars{}); strings.Contains(s, "LEAK") != strings.Contains(marked, "LEAK") {
			t.Fatalf("Expand(%q, no vars) = %q", s, marked)
		}
	})
}
