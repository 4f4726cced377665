package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/workspace"
)

// PROV-4: `rein provider add` stores OAuth settings (token URL, client id,
// client secret variable, refresh token file, scopes) and refuses
// incomplete or conflicting ones with errors that say what to add.
func TestProviderAddOAuth_PROV4(t *testing.T) {
	te := newTestEnv(t)
	refresh := te.write("corp.refresh", "rt-1\n")
	out, _ := te.mustRun(ExitOK, "provider", "add", "corp", "--provider", "anthropic",
		"--base-url", "https://llm.corp.example", "--oauth-token-url", "https://login.corp.example/token",
		"--oauth-client-id", "rein", "--oauth-client-secret-env", "CORP_SECRET",
		"--oauth-refresh-token-file", "corp.refresh", "--oauth-scopes", "llm.invoke,offline_access")
	if !strings.Contains(out, "Added profile corp") || strings.Contains(out, "Note:") {
		t.Errorf("add:\n%s", out)
	}
	pf, err := workspace.LoadProfiles(filepath.Join(te.home, ".config", "rein", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pf.Profiles) != 1 || pf.Profiles[0].OAuth == nil {
		t.Fatalf("stored profiles %+v", pf.Profiles)
	}
	o := pf.Profiles[0].OAuth
	if o.TokenURL != "https://login.corp.example/token" || o.ClientID != "rein" || o.ClientSecretEnv != "CORP_SECRET" ||
		o.RefreshTokenFile != refresh || strings.Join(o.Scopes, " ") != "llm.invoke offline_access" {
		t.Errorf("stored oauth %+v", o)
	}
	out, _ = te.mustRun(ExitOK, "provider", "list")
	if !strings.Contains(out, "oauth "+refresh+" (set)") {
		t.Errorf("list:\n%s", out)
	}

	// A refresh token variable that is not set yet is stored, with a note.
	out, _ = te.mustRun(ExitOK, "provider", "add", "corp2", "--provider", "openai-compatible", "--base-url", "https://x.example/v1",
		"--oauth-token-url", "https://login.example/token", "--oauth-refresh-token-env", "CORP2_REFRESH")
	if !strings.Contains(out, "CORP2_REFRESH") || !strings.Contains(out, "Note:") {
		t.Errorf("add with an unset variable:\n%s", out)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--oauth-client-id", "rein"}, "need --oauth-token-url"},
		{[]string{"--oauth-token-url", "https://l.example/token"}, "--oauth-refresh-token-env VAR or --oauth-refresh-token-file"},
		{[]string{"--oauth-token-url", "https://l.example/token", "--oauth-refresh-token-env", "R", "--api-key-env", "K"}, "cannot be combined"},
		{[]string{"--oauth-token-url", "http://login.example/token", "--oauth-refresh-token-env", "R"}, "must use https"},
		{[]string{"--oauth-token-url", "login.example", "--oauth-refresh-token-env", "R"}, "not an http(s) URL"},
		{[]string{"--oauth-token-url", "https://l.example/t", "--oauth-refresh-token-env", "R", "--oauth-refresh-token-file", "corp.refresh"}, "keep one"},
		{[]string{"--oauth-token-url", "https://l.example/t", "--oauth-refresh-token-file", "missing.refresh"}, "no such file"},
	} {
		args := append([]string{"provider", "add", "bad", "--provider", "anthropic"}, tt.args...)
		_, errs := te.mustRun(ExitUsage, args...)
		if !strings.Contains(errs, tt.want) {
			t.Errorf("%v: %s, want %q", tt.args, errs, tt.want)
		}
	}
	if _, err := os.Stat(refresh); err != nil {
		t.Fatal(err)
	}
}
