package cli

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/workspace"
)

func (a *App) providerCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "provider",
		Short: "List, add and choose provider profiles (~/.config/rein/config.yaml)",
		Long: `Provider profiles name a way to reach models: an adapter (anthropic, openai,
openai-responses, google, openai-compatible), a base URL, where the key comes
from and a default model. Built-in profiles cover Anthropic, OpenAI, Google
and common OpenAI-compatible servers; they read the vendors' own variables
(ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL, OPENAI_API_KEY and OPENAI_BASE_URL,
GEMINI_API_KEY or GOOGLE_API_KEY and GOOGLE_GEMINI_BASE_URL).

A model string "profile/model" runs model on that profile; a bare profile name
runs its default model.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(a.providerList(), a.providerAdd(), a.providerUse(), a.providerRemove())
	return cmd
}

// registryOf builds the registry of the user's profiles.
func (a *App) registryOf(l *workspace.Loaded) (*registry.Registry, error) {
	rc, err := l.RegistryConfig(a.getenv)
	if err != nil {
		return nil, fail(ExitError, "%v", err)
	}
	reg, err := registry.New(rc)
	if err != nil {
		return nil, fail(ExitError, "%s: %v", l.Profiles.Path, err)
	}
	return reg, nil
}

// loadConfig loads the configuration of the directory rein runs in.
func (a *App) loadConfig() (*workspace.Loaded, error) {
	l, err := workspace.Load(workspace.Options{WorkDir: a.Dir, Getenv: a.getenv})
	if err != nil {
		return nil, fail(ExitError, "configuration: %v", err)
	}
	return l, nil
}

// profileView is a profile as `rein provider list --json` shows it.
type profileView struct {
	Name         string `json:"name"`
	Provider     string `json:"provider"`
	BaseURL      string `json:"base_url,omitempty"`
	KeyFrom      string `json:"key_from,omitempty"`
	KeySet       bool   `json:"key_set"`
	DefaultModel string `json:"default_model,omitempty"`
	Current      bool   `json:"current,omitempty"`
}

func (a *App) providerList() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the provider profiles; * marks the one the configured model uses",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := a.loadConfig()
			if err != nil {
				return err
			}
			reg, err := a.registryOf(l)
			if err != nil {
				return err
			}
			current, _, _ := reg.Parse(l.Effective.String(workspace.Model))
			var views []profileView
			for _, p := range reg.Profiles() {
				r := registry.Auth(p, a.getenv)
				v := profileView{Name: p.Name, Provider: p.Provider, BaseURL: r.BaseURL, KeyFrom: p.APIKeyEnv,
					KeySet: r.APIKey != "", DefaultModel: p.DefaultModel, Current: p.Name == current}
				if p.APIKey != "" {
					v.KeyFrom = "config"
				}
				if p.OAuth != nil {
					v.KeyFrom = "oauth " + p.OAuth.RefreshTokenEnv + p.OAuth.RefreshTokenFile
					v.KeySet = p.CheckOAuth(a.getenv) == nil
				}
				views = append(views, v)
			}
			if asJSON {
				return writeJSON(a.Stdout, views)
			}
			return printProfiles(a, views)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printProfiles(a *App, views []profileView) error {
	tw := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tADAPTER\tBASE URL\tKEY\tDEFAULT MODEL")
	for _, v := range views {
		mark := " "
		if v.Current {
			mark = "*"
		}
		key := "-"
		if v.KeyFrom != "" {
			state := "missing"
			if v.KeySet {
				state = "set"
			}
			key = fmt.Sprintf("%s (%s)", v.KeyFrom, state)
		}
		fmt.Fprintf(tw, "%s %s\t%s\t%s\t%s\t%s\n", mark, v.Name, v.Provider, orDash(v.BaseURL), key, orDash(v.DefaultModel))
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oauthFlags are the OAuth settings of `rein provider add` (SPEC PROV-4).
type oauthFlags struct {
	tokenURL, clientID, secretEnv, refreshEnv, refreshFile string
	scopes                                                 []string
}

// profile returns the OAuth settings the flags give, nil when none is set,
// or a usage error naming what is missing or wrong.
func (o *oauthFlags) profile(a *App, p registry.Profile) (*registry.OAuthProfile, error) {
	if o.tokenURL == "" && o.clientID == "" && o.secretEnv == "" && o.refreshEnv == "" && o.refreshFile == "" && len(o.scopes) == 0 {
		return nil, nil
	}
	if o.tokenURL == "" {
		return nil, fail(ExitUsage, "OAuth settings need --oauth-token-url (the provider's OAuth2 token endpoint)")
	}
	if o.refreshEnv == "" && o.refreshFile == "" {
		return nil, fail(ExitUsage, "OAuth settings need the refresh token: --oauth-refresh-token-env VAR or --oauth-refresh-token-file PATH")
	}
	if p.APIKey != "" || p.APIKeyEnv != "" {
		return nil, fail(ExitUsage, "--api-key and --api-key-env cannot be combined with OAuth settings: a profile uses one or the other")
	}
	op := &registry.OAuthProfile{TokenURL: o.tokenURL, ClientID: o.clientID, ClientSecretEnv: o.secretEnv,
		RefreshTokenEnv: o.refreshEnv}
	if o.refreshFile != "" {
		op.RefreshTokenFile = a.abs(o.refreshFile)
		fi, err := os.Stat(op.RefreshTokenFile)
		if err != nil {
			return nil, fail(ExitUsage, "--oauth-refresh-token-file: %v", err)
		}
		if fi.IsDir() {
			return nil, fail(ExitUsage, "--oauth-refresh-token-file: %s is a directory", op.RefreshTokenFile)
		}
	}
	for _, s := range o.scopes {
		op.Scopes = append(op.Scopes, strings.Fields(s)...)
	}
	return op, nil
}

func (a *App) providerAdd() *cobra.Command {
	var p registry.Profile
	var use bool
	var oauth oauthFlags
	cmd := &cobra.Command{
		Use:   "add NAME",
		Short: "Add (or replace) a provider profile",
		Example: `  rein provider add local --provider openai-compatible --base-url http://127.0.0.1:11434/v1 --default-model qwen3-coder
  rein provider add work --provider anthropic --base-url-env WORK_GATEWAY_URL --api-key-env WORK_KEY --use
  rein provider add openai-chat --provider openai --default-model gpt-4o   # OpenAI over Chat Completions
  rein provider add corp --provider anthropic --base-url https://llm.corp.example \
      --oauth-token-url https://login.corp.example/oauth2/token --oauth-client-id rein \
      --oauth-refresh-token-file ~/.config/rein/corp.refresh --oauth-scopes llm.invoke`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p.Name = args[0]
			op, err := oauth.profile(a, p)
			if err != nil {
				return err
			}
			p.OAuth = op
			l, err := a.loadConfig()
			if err != nil {
				return err
			}
			pf := l.Profiles
			pf.Put(p)
			if use {
				pf.Default = p.Name
			}
			if _, err := registry.New(registry.Config{Profiles: pf.Profiles}); err != nil {
				return fail(ExitUsage, "%v", err)
			}
			if err := pf.Save(l.Paths.ProfilesFile()); err != nil {
				return fail(ExitError, "saving %s: %v", l.Paths.ProfilesFile(), err)
			}
			fmt.Fprintf(a.Stdout, "Added profile %s (%s) to %s.\n", p.Name, p.Provider, l.Paths.ProfilesFile())
			if err := p.CheckOAuth(a.getenv); err != nil {
				fmt.Fprintf(a.Stdout, "Note: %v: the profile works once the refresh token is there.\n", err)
			}
			if use {
				fmt.Fprintf(a.Stdout, "It is now the default.\n")
			} else {
				fmt.Fprintf(a.Stdout, "Use it with --model %s/MODEL, or make it the default: rein provider use %s\n", p.Name, p.Name)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&p.Provider, "provider", "", "adapter: anthropic, openai (Chat Completions), openai-responses, google or openai-compatible")
	f.StringVar(&p.BaseURL, "base-url", "", "API root (for openai-compatible, e.g. http://127.0.0.1:11434/v1)")
	f.StringVar(&p.BaseURLEnv, "base-url-env", "", "variable that holds the base URL")
	f.StringVar(&p.APIKeyEnv, "api-key-env", "", "variable that holds the key (comma-separated: the first set wins)")
	f.StringVar(&p.APIKey, "api-key", "", "the key itself, stored in config.yaml (mode 0600); prefer --api-key-env")
	f.StringVar(&p.DefaultModel, "default-model", "", "model used when a model string names only the profile")
	f.BoolVar(&use, "use", false, "also make it the default")
	f.StringVar(&oauth.tokenURL, "oauth-token-url", "", "OAuth2 token endpoint: authenticate with refreshed bearer tokens instead of a key")
	f.StringVar(&oauth.clientID, "oauth-client-id", "", "OAuth2 client id")
	f.StringVar(&oauth.secretEnv, "oauth-client-secret-env", "", "variable that holds the OAuth2 client secret, if the client has one")
	f.StringVar(&oauth.refreshEnv, "oauth-refresh-token-env", "", "variable that holds the OAuth2 refresh token")
	f.StringVar(&oauth.refreshFile, "oauth-refresh-token-file", "", "file that holds the OAuth2 refresh token (rotated tokens are written back)")
	f.StringSliceVar(&oauth.scopes, "oauth-scopes", nil, "OAuth2 scopes sent with each refresh (comma-separated or repeated)")
	_ = cmd.MarkFlagRequired("provider")
	return cmd
}

func (a *App) providerUse() *cobra.Command {
	return &cobra.Command{
		Use:   "use PROFILE[/MODEL]",
		Short: "Make a profile (or a model on it) the default",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := a.loadConfig()
			if err != nil {
				return err
			}
			reg, err := a.registryOf(l)
			if err != nil {
				return err
			}
			spec := strings.TrimSpace(args[0])
			prov, model, err := reg.Parse(spec)
			if err != nil {
				return fail(ExitUsage, "%v\nrein provider list shows the profiles.", err)
			}
			l.Profiles.Default = spec
			if err := l.Profiles.Save(l.Paths.ProfilesFile()); err != nil {
				return fail(ExitError, "saving %s: %v", l.Paths.ProfilesFile(), err)
			}
			fmt.Fprintf(a.Stdout, "Default model: %s/%s (saved in %s).\n", prov, model, l.Paths.ProfilesFile())
			if v := l.Effective.Get(workspace.Model); overridesProfile(v, l) {
				fmt.Fprintf(a.Stdout, "Note: %s (%s %s) still overrides it here.\n", v.Value, v.Source, v.Origin)
			}
			return nil
		},
	}
}

// overridesProfile reports whether model setting v wins over the default
// profile of config.yaml: a flag, a variable, a workspace's settings, or
// model: in the user's settings.yaml.
func overridesProfile(v workspace.Value, l *workspace.Loaded) bool {
	switch v.Source {
	case workspace.SourceFlag, workspace.SourceEnv, workspace.SourceWorkspace:
		return true
	case workspace.SourceUser:
		return v.Origin != l.Paths.ProfilesFile()
	}
	return false
}

func (a *App) providerRemove() *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove a profile from config.yaml",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := a.loadConfig()
			if err != nil {
				return err
			}
			if !l.Profiles.Remove(args[0]) {
				return fail(ExitError, "no profile %q in %s", args[0], l.Paths.ProfilesFile())
			}
			if err := l.Profiles.Save(l.Paths.ProfilesFile()); err != nil {
				return fail(ExitError, "saving %s: %v", l.Paths.ProfilesFile(), err)
			}
			fmt.Fprintf(a.Stdout, "Removed profile %s.\n", args[0])
			return nil
		},
	}
}
