package hook

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// PERM-5: a command hook runs with a clean environment — the base set, the
// project variables and what it names; never a provider key it did not
// name, whether the environment comes from the process or from Getenv.
func TestCommandCleanEnv_PERM5(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-process")
	t.Setenv("GITHUB_TOKEN", "ghp-process")
	t.Setenv("LANG", "C.UTF-8")
	env := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-getenv", "GITHUB_TOKEN": "ghp-getenv",
		"PATH": "/usr/bin:/bin", "HOME": "/home/ada"}
	getenv := func(k string) string { return env[k] }
	const show = `echo "key=[$ANTHROPIC_API_KEY] gh=[$GITHUB_TOKEN] home=[$HOME] project=[$REIN_PROJECT_DIR] extra=[$EXTRA]" >&2; exit 2`
	tests := []struct {
		name string
		hook Command
		want string
	}{
		{"process environment, nothing named", Command{Command: show},
			"key=[] gh=[] home=[" + os.Getenv("HOME") + "] project=[/p] extra=[]"},
		{"process environment, GITHUB_TOKEN named", Command{Command: show, PassEnv: []string{"GITHUB_TOKEN"}},
			"key=[] gh=[ghp-process] home=[" + os.Getenv("HOME") + "] project=[/p] extra=[]"},
		{"Getenv, nothing named", Command{Command: show, Getenv: getenv},
			"key=[] gh=[] home=[/home/ada] project=[/p] extra=[]"},
		{"Getenv, the key named", Command{Command: show, Getenv: getenv, PassEnv: []string{"ANTHROPIC_API_KEY"}},
			"key=[sk-ant-getenv] gh=[] home=[/home/ada] project=[/p] extra=[]"},
		{"Env pairs are added", Command{Command: show, Getenv: getenv, Env: []string{"EXTRA=x"}},
			"key=[] gh=[] home=[/home/ada] project=[/p] extra=[x]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.hook
			h.ProjectDir = "/p"
			in := toolInput("bash", "ls")
			in.CWD = t.TempDir()
			got, err := h.Run(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if got.Reason != tt.want {
				t.Errorf("the hook saw\n  %s\nwant\n  %s", got.Reason, tt.want)
			}
		})
	}
}

// PERM-5: the environment of a hook holds the base variables that are
// set, and a PATH even when rein has none.
func TestHookEnv_PERM5(t *testing.T) {
	env := map[string]string{"HOME": "/h", "LANG": "C", "OPENAI_API_KEY": "sk", "AWS_SECRET_ACCESS_KEY": "x"}
	got := CleanEnv(func(k string) string { return env[k] }, []string{"LANG", "NAMED"}, "A=1")
	want := []string{"HOME=/h", "LANG=C", "PATH=" + defaultPath, "A=1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

// PERM-5: hooks name the variables they need — env in rein's format,
// allowedEnvVars on a Claude Code http hook — and Registration passes them
// on; a name that is not a variable name is an error.
func TestParseEnv_PERM5(t *testing.T) {
	specs, err := Parse([]byte("hooks:\n  stop:\n    - {command: ./notify.sh, env: [SLACK_WEBHOOK_URL, GITHUB_TOKEN]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"SLACK_WEBHOOK_URL", "GITHUB_TOKEN"}, specs[0].Env); diff != "" {
		t.Errorf("env: %s", diff)
	}
	c, ok := specs[0].Registration("/p", nil, nil).Hook.(*Command)
	if !ok || !cmp.Equal(c.PassEnv, specs[0].Env) {
		t.Errorf("registration: %+v", specs[0].Registration("/p", nil, nil).Hook)
	}
	specs, err = Parse([]byte(`{"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "https://h.example/x",
		"headers": {"Authorization": "Bearer $T"}, "allowedEnvVars": ["T"]}]}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := specs[0]; !cmp.Equal(s.Env, []string{"T"}) || s.Headers["Authorization"] != "Bearer $T" {
		t.Errorf("claude http hook: %+v", s)
	}
	if h, ok := specs[0].Registration("/p", nil, nil).Hook.(*HTTP); !ok || !cmp.Equal(h.PassEnv, []string{"T"}) {
		t.Errorf("registration: %+v", specs[0].Registration("/p", nil, nil).Hook)
	}
	for _, bad := range []string{
		"hooks:\n  stop:\n    - {command: x, env: [\"$TOKEN\"]}\n",
		"hooks:\n  stop:\n    - {command: x, env: TOKEN}\n",
		"hooks:\n  stop:\n    - {command: x, env: [A=B]}\n",
	} {
		if _, err := Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), "env") {
			t.Errorf("Parse(%q) error = %v, want one about env", bad, err)
		}
	}
}

// posterFunc is a Poster of a function: HTTP hooks without a network.
type posterFunc func(ctx context.Context, url string, header map[string]string, body []byte, limit int64) (int, []byte, error)

func (f posterFunc) Post(ctx context.Context, url string, header map[string]string, body []byte, limit int64) (int, []byte, error) {
	return f(ctx, url, header, body, limit)
}

// HOOK-3: an HTTP hook without a transport fails, saying what it needs;
// a hook's own Content-Type replaces the default whatever its case, and
// the reply is read at most maxOutput bytes.
func TestHTTPPoster_HOOK3(t *testing.T) {
	if _, err := (&HTTP{URL: "http://127.0.0.1:1/"}).Run(context.Background(), toolInput("bash", "ls")); err == nil || !strings.Contains(err.Error(), "Poster") {
		t.Errorf("no poster: %v, want an error naming the Poster", err)
	}
	var got map[string]string
	var limit int64
	h := &HTTP{URL: "http://hooks.test/x", Headers: map[string]string{"content-type": "application/x-rein"},
		Poster: posterFunc(func(_ context.Context, _ string, header map[string]string, _ []byte, l int64) (int, []byte, error) {
			got, limit = header, l
			return 200, []byte("ok"), nil
		})}
	if _, err := h.Run(context.Background(), toolInput("bash", "ls")); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["content-type"] != "application/x-rein" || got["User-Agent"] != "rein-hook" {
		t.Errorf("headers %v, want the hook's content-type alone and the user agent", got)
	}
	if limit != maxOutput {
		t.Errorf("limit %d, want %d", limit, maxOutput)
	}
}
