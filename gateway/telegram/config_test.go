package telegram

import (
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestConfigYAML(t *testing.T) {
	var cfg Config
	src := "token_env: OPS_BOT\napi_url: http://127.0.0.1:8081\npoll_timeout: 25s\n"
	if err := yaml.Unmarshal([]byte(src), &cfg); err != nil {
		t.Fatal(err)
	}
	want := Config{TokenEnv: "OPS_BOT", APIURL: "http://127.0.0.1:8081", PollTimeout: 25 * time.Second}
	if cfg != want {
		t.Errorf("cfg = %+v, want %+v", cfg, want)
	}
}
