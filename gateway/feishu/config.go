// Package feishu is the gateway's Feishu / Lark channel (SPEC GW-2): a
// custom app's bot that receives by the event subscription (Feishu posts
// im.message.receive_v1 and card.action.trigger to /<name>/events) and
// answers with interactive cards, so every message it sends can be edited
// (PATCH) and carry buttons.
//
// The official SDK (github.com/larksuite/oapi-sdk-go/v3) is not available
// to this module, so the channel speaks the Open Platform's HTTP API itself
// over net/http: the tenant access token, sending and patching messages,
// and fetching a message's images. That is all it needs.
package feishu

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/gateway"
)

// Defaults of [Config].
const (
	DefaultAppSecretEnv         = "FEISHU_APP_SECRET"
	DefaultVerificationTokenEnv = "FEISHU_VERIFICATION_TOKEN"
	DefaultEncryptKeyEnv        = "FEISHU_ENCRYPT_KEY"
	// DefaultAPIURL is Feishu's; Lark's is https://open.larksuite.com.
	DefaultAPIURL = "https://open.feishu.cn"
)

// Config is the Feishu channel's settings in the gateway's configuration
// file.
type Config struct {
	// AppID is the custom app's App ID ("cli_..."), from the developer
	// console's Credentials & Basic Info page.
	AppID string `yaml:"app_id"`
	// AppSecretEnv names the variable holding the App Secret (default
	// FEISHU_APP_SECRET).
	AppSecretEnv string `yaml:"app_secret_env"`
	// VerificationTokenEnv names the variable holding the event
	// subscription's Verification Token (default FEISHU_VERIFICATION_TOKEN).
	VerificationTokenEnv string `yaml:"verification_token_env"`
	// EncryptKeyEnv names the variable holding the event subscription's
	// Encrypt Key (default FEISHU_ENCRYPT_KEY). It is optional; when set,
	// events arrive encrypted and signed, and the signature is checked.
	EncryptKeyEnv string `yaml:"encrypt_key_env"`
	// APIURL is the Open Platform's base (default https://open.feishu.cn;
	// https://open.larksuite.com for Lark); tests point it at the fake.
	APIURL string `yaml:"api_url"`
}

// Channel is a Feishu / Lark bot. It implements [gateway.Channel] and
// [gateway.HTTPReceiver].
type Channel struct {
	name              string
	appID             string
	appSecret         string
	verificationToken string
	encryptKey        string
	apiURL            string
	http              *http.Client
	now               func() time.Time

	partials partials

	mu       sync.Mutex
	token    string
	tokenExp time.Time
}

// New returns the channel named name. It reads the secrets from the
// environment through getenv; it does not call Feishu.
func New(name string, cfg Config, getenv func(string) string) (*Channel, error) {
	if name == "" {
		return nil, errors.New("feishu: the channel has no name")
	}
	if strings.TrimSpace(cfg.AppID) == "" {
		return nil, errors.New("feishu: app_id is not set: copy the App ID (cli_...) from the app's Credentials & Basic Info page " +
			"in the developer console (open.feishu.cn/app, or open.larksuite.com/app for Lark)")
	}
	secretEnv := cmp.Or(cfg.AppSecretEnv, DefaultAppSecretEnv)
	secret := strings.TrimSpace(getenv(secretEnv))
	if secret == "" {
		return nil, fmt.Errorf("feishu: %s is not set: set it to the App Secret from the app's Credentials & Basic Info page "+
			"in the developer console", secretEnv)
	}
	tokenEnv := cmp.Or(cfg.VerificationTokenEnv, DefaultVerificationTokenEnv)
	vtoken := strings.TrimSpace(getenv(tokenEnv))
	if vtoken == "" {
		return nil, fmt.Errorf("feishu: %s is not set: set it to the Verification Token from the app's "+
			"Events & Callbacks > Encryption Strategy page in the developer console", tokenEnv)
	}
	keyEnv := cmp.Or(cfg.EncryptKeyEnv, DefaultEncryptKeyEnv)
	api, _, err := gateway.APIBase(cfg.APIURL, DefaultAPIURL)
	if err != nil {
		return nil, fmt.Errorf("feishu: %w (https://open.larksuite.com for Lark)", err)
	}
	return &Channel{
		name:              name,
		appID:             strings.TrimSpace(cfg.AppID),
		appSecret:         secret,
		verificationToken: vtoken,
		encryptKey:        strings.TrimSpace(getenv(keyEnv)),
		apiURL:            api,
		http:              &http.Client{Timeout: time.Minute},
		now:               time.Now,
	}, nil
}
