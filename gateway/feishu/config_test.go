package feishu

import (
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	full := map[string]string{
		"FEISHU_APP_SECRET":         "secret",
		"FEISHU_VERIFICATION_TOKEN": "vtoken",
		"MY_SECRET":                 "mine",
	}
	tests := []struct {
		name    string
		cfg     Config
		env     map[string]string
		wantErr string // a part of the error; "" for none
		check   func(t *testing.T, c *Channel)
	}{
		{name: "defaults", cfg: Config{AppID: "cli_x"}, env: full, check: func(t *testing.T, c *Channel) {
			if c.apiURL != DefaultAPIURL || c.appSecret != "secret" || c.verificationToken != "vtoken" || c.encryptKey != "" {
				t.Errorf("got api %q secret %q token %q key %q", c.apiURL, c.appSecret, c.verificationToken, c.encryptKey)
			}
		}},
		{name: "named variables and Lark", cfg: Config{AppID: "cli_x", AppSecretEnv: "MY_SECRET", EncryptKeyEnv: "MY_SECRET",
			APIURL: "https://open.larksuite.com/"}, env: full, check: func(t *testing.T, c *Channel) {
			if c.apiURL != "https://open.larksuite.com" || c.appSecret != "mine" || c.encryptKey != "mine" {
				t.Errorf("got api %q secret %q key %q", c.apiURL, c.appSecret, c.encryptKey)
			}
		}},
		{name: "no app id", cfg: Config{}, env: full, wantErr: "app_id is not set"},
		{name: "no secret", cfg: Config{AppID: "cli_x"}, env: map[string]string{"FEISHU_VERIFICATION_TOKEN": "v"},
			wantErr: "FEISHU_APP_SECRET is not set"},
		{name: "no verification token", cfg: Config{AppID: "cli_x", VerificationTokenEnv: "VT"}, env: full,
			wantErr: "VT is not set"},
		{name: "bad api url", cfg: Config{AppID: "cli_x", APIURL: "open.feishu.cn"}, env: full, wantErr: "api_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New("feishu", tt.cfg, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New: %v; want an error with %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "secret") && strings.Contains(err.Error(), "vtoken") {
					t.Errorf("the error shows a secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if c.Name() != "feishu" {
				t.Errorf("Name = %q", c.Name())
			}
			tt.check(t, c)
		})
	}
}
