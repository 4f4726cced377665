package cli

import (
	"context"
	"fmt"
	"iter"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/registry"
)

// endpointOf says where a profile's requests go and what set that, for
// the message of a request that cannot get there (SPEC CLI-4, PROV-7):
// "http://127.0.0.1:1 (ANTHROPIC_BASE_URL)", "https://… (profile work,
// rein provider list)", or the provider's default endpoint.
func endpointOf(reg *registry.Registry, p registry.Profile) string {
	raw, _ := reg.Profile(p.Name)
	switch {
	case p.BaseURL == "":
		return fmt.Sprintf("the default endpoint of %s (no base URL is set)", p.Name)
	case raw.BaseURL == "" && raw.BaseURLEnv != "":
		return fmt.Sprintf("%s, set by %s", p.BaseURL, raw.BaseURLEnv)
	}
	return fmt.Sprintf("%s, the base URL of profile %s (rein provider list)", p.BaseURL, p.Name)
}

// naming wraps a provider so that a request that cannot reach its
// endpoint (a network failure or a timeout, retried or not) says where
// it was sent and what set that, in the error's hint: the retry lines
// and the final error then name the URL to check. It validates keys
// (llm.AuthValidator) when the provider does, with the same hint.
func naming(p llm.Provider, endpoint string) llm.Provider {
	n := &named{inner: p, hint: "cannot reach " + endpoint}
	if av, ok := p.(llm.AuthValidator); ok {
		return &namedValidator{named: n, av: av}
	}
	return n
}

// named is [naming]'s provider.
type named struct {
	inner llm.Provider
	hint  string
}

// Stream implements llm.Provider.
func (n *named) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	return func(yield func(llm.Delta, error) bool) {
		for d, err := range n.inner.Stream(ctx, req) {
			if !yield(d, n.name(ctx, err)) {
				return
			}
		}
	}
}

// name adds the hint to a network failure or a timeout.
func (n *named) name(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	e := llm.FromTransport(ctx, "", err)
	if (e.Kind != llm.KindNetwork && e.Kind != llm.KindTimeout) || e.Hint != "" {
		return err
	}
	withHint := *e
	withHint.Hint = n.hint
	return &withHint
}

// namedValidator is [named] over a provider that validates keys.
type namedValidator struct {
	*named
	av llm.AuthValidator
}

// ValidateAuth implements llm.AuthValidator.
func (n *namedValidator) ValidateAuth(ctx context.Context) error {
	return n.name(ctx, n.av.ValidateAuth(ctx))
}
