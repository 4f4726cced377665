package persona

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// The identity's limits, in characters (runes).
const (
	MaxNameChars   = 64
	MaxAvatarChars = 16
)

// ErrInvalid is an identity, SOUL.md or answer that does not pass the
// checks; the error wrapping it says which and why.
var ErrInvalid = errors.New("invalid persona")

// Identity is who the agent is by name: identity.yaml.
type Identity struct {
	// Name is what the agent is called: 1–64 characters, no control
	// characters.
	Name string `yaml:"name" json:"name"`
	// Avatar is a short text or emoji shown next to the name: at most 16
	// characters, no control characters; "" for none.
	Avatar string `yaml:"avatar,omitempty" json:"avatar,omitempty"`
}

// Validate checks the identity's limits.
func (id Identity) Validate() error {
	if err := checkName(id.Name); err != nil {
		return err
	}
	return checkAvatar(id.Avatar)
}

func checkName(name string) error {
	n := utf8.RuneCountInString(name)
	switch {
	case strings.TrimSpace(name) == "":
		return fmt.Errorf("%w: the name is empty: give the agent a name (1–%d characters)", ErrInvalid, MaxNameChars)
	case n > MaxNameChars:
		return fmt.Errorf("%w: the name is %d characters; at most %d", ErrInvalid, n, MaxNameChars)
	case hasControl(name):
		return fmt.Errorf("%w: the name holds a control character (a line break, a tab…); use plain text", ErrInvalid)
	}
	return nil
}

func checkAvatar(avatar string) error {
	n := utf8.RuneCountInString(avatar)
	switch {
	case n > MaxAvatarChars:
		return fmt.Errorf("%w: the avatar is %d characters; at most %d (an emoji or a few letters)", ErrInvalid, n, MaxAvatarChars)
	case hasControl(avatar):
		return fmt.Errorf("%w: the avatar holds a control character; use plain text or an emoji", ErrInvalid)
	}
	return nil
}

// hasControl reports whether s holds a control or format character other
// than the zero-width joiner and variation selectors emoji are built with.
func hasControl(s string) bool {
	for _, r := range s {
		if r == '\u200d' || (r >= '\ufe00' && r <= '\ufe0f') {
			continue
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			return true
		}
	}
	return false
}

// parseIdentity reads an identity.yaml document; unknown keys are errors.
// An empty document is the zero identity.
func parseIdentity(data []byte) (Identity, error) {
	var id Identity
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&id); err != nil && !errors.Is(err, io.EOF) {
		return Identity{}, fmt.Errorf("%w: not a valid identity file (name, avatar): %v", ErrInvalid, err)
	}
	id.Name, id.Avatar = strings.TrimSpace(id.Name), strings.TrimSpace(id.Avatar)
	return id, nil
}

// identityHeader heads identity.yaml.
const identityHeader = "# rein's personal agent: its name and avatar. `rein persona show|edit|reset`.\n"

// renderIdentity writes identity.yaml.
func renderIdentity(id Identity) ([]byte, error) {
	body, err := yaml.Marshal(id)
	if err != nil {
		return nil, err
	}
	return append([]byte(identityHeader), body...), nil
}
