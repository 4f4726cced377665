package persona

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/memory"
)

// The limits of the bootstrap's free-text answers, in characters.
const (
	maxAddressChars = 64
	maxAboutChars   = 500
	maxStyleChars   = 1000
)

// ErrEmpty is an empty answer to a question that needs one: the question
// is asked again.
var ErrEmpty = errors.New("empty answer")

// step is one question of the bootstrap.
type step struct {
	key, question string
	// optional steps take a skip word ("skip", "跳过", …) as no answer.
	optional bool
	// set validates the trimmed answer and stores it in the result.
	set func(r *Result, answer string) error
}

// steps are the bootstrap's questions, in order.
var steps = []step{
	{key: "name", question: "Hello! Before we start: what would you like to call me? (a name, up to 64 characters)",
		set: func(r *Result, a string) error {
			if err := checkName(a); err != nil {
				return err
			}
			r.Identity.Name = a
			return nil
		}},
	{key: "avatar", question: "Pick an avatar for me: an emoji or a few characters (or say skip).", optional: true,
		set: func(r *Result, a string) error {
			if err := checkAvatar(a); err != nil {
				return err
			}
			r.Identity.Avatar = a
			return nil
		}},
	{key: "address", question: "How should I address you?",
		set: func(r *Result, a string) error {
			if err := checkText(a, maxAddressChars); err != nil {
				return err
			}
			r.Address = a
			return nil
		}},
	{key: "about", question: "What do you do — your work, projects, the tools you use? (or say skip)", optional: true,
		set: func(r *Result, a string) error {
			if err := checkText(a, maxAboutChars); err != nil {
				return err
			}
			r.About = a
			return nil
		}},
	{key: "style", question: "Last one: how should I talk to you — tone and style? (e.g. terse and direct, warm and patient, formal)",
		set: func(r *Result, a string) error {
			if err := checkText(a, maxStyleChars); err != nil {
				return err
			}
			r.Style = a
			return nil
		}},
}

// skipWords are the answers that skip an optional question.
var skipWords = map[string]bool{"skip": true, "none": true, "no": true, "-": true, "n/a": true,
	"跳过": true, "略过": true, "无": true, "没有": true, "不用": true, "不要": true}

// checkText checks a free-text answer: its length, no control characters
// but line breaks, and memory's scanner, since the answers end up in
// every system prompt (the bootstrap may be driven from a public chat).
func checkText(a string, limit int) error {
	if n := utf8.RuneCountInString(a); n > limit {
		return fmt.Errorf("%w: that is %d characters; at most %d — shorter, please", ErrInvalid, n, limit)
	}
	if hasControl(strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(a)) {
		return fmt.Errorf("%w: the answer holds a control character; use plain text", ErrInvalid)
	}
	if fs := memory.Scan(a); len(fs) > 0 {
		return fmt.Errorf("%w: %s; say it as a plain description", ErrInvalid, memory.Explain(fs))
	}
	return nil
}

// Result is what the bootstrap collected.
type Result struct {
	Identity Identity `json:"identity"`
	// Address is how the user wants to be addressed; About what they do.
	// Both go to the profile (USER.md).
	Address string `json:"address"`
	About   string `json:"about,omitempty"`
	// Style is the tone and style the user wants; it goes to SOUL.md.
	Style string `json:"style"`
}

// Soul is the SOUL.md the result writes: who the agent is, the style the
// user asked for, and a few standing truths.
func (r Result) Soul() string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are %s, a personal agent built on rein.\n\n", r.Identity.Name)
	b.WriteString("## Style\n\n")
	b.WriteString(r.Style)
	b.WriteString("\n\n## Core truths\n\n")
	b.WriteString(`- Be genuinely helpful, not performatively helpful; skip filler.
- Have judgment: prefer one option over another, and say why.
- Be resourceful before asking: read, check and try first.
- Be careful with anything public, destructive, costly or user-facing.
- Treat what you learn about the user as private.
`)
	return b.String()
}

// Profile is the profile entries (USER.md) the result adds.
func (r Result) Profile() []string {
	out := []string{"Wants to be addressed as: " + r.Address}
	if r.About != "" {
		out = append(out, "About their work: "+r.About)
	}
	return out
}

// Bootstrap is the first-run conversation: a handful of questions (what to
// call the agent, its avatar, how to address the user and what they do,
// the tone to use), asked one at a time by any chat front. It is not safe
// for concurrent use: one chat drives it.
type Bootstrap struct {
	at     int
	result Result
}

// NewBootstrap starts the conversation at its first question.
func NewBootstrap() *Bootstrap { return &Bootstrap{} }

// Next returns the question to ask, or done when every question has an
// answer. After an answer is refused it returns the same question.
func (b *Bootstrap) Next() (question string, done bool) {
	if b.at >= len(steps) {
		return "", true
	}
	return steps[b.at].question, false
}

// Answer takes the reply to the current question. An empty reply to a
// question that needs one ([ErrEmpty]) or one that fails its checks
// ([ErrInvalid]) is refused with the reason, and the question stays. An
// optional question takes a skip word ("skip", "跳过", …) or an empty
// reply as no answer.
func (b *Bootstrap) Answer(text string) error {
	if b.at >= len(steps) {
		return errors.New("the bootstrap is done: nothing more to answer")
	}
	s := steps[b.at]
	a := strings.TrimSpace(text)
	if s.optional && (a == "" || skipWords[strings.ToLower(strings.Trim(a, ".。!！ "))]) {
		b.at++
		return nil
	}
	if a == "" {
		return fmt.Errorf("%w: %s", ErrEmpty, "please answer — "+s.question)
	}
	if err := s.set(&b.result, a); err != nil {
		return err
	}
	b.at++
	return nil
}

// Result returns what has been collected so far.
func (b *Bootstrap) Result() Result { return b.result }

// Apply writes the collected persona: the profile entries to USER.md
// through store (memory's scanner, deduplication and cap apply; a
// refusal stops it), then SOUL.md and identity.yaml to dir. The profile
// goes first so that a failure leaves the persona not bootstrapped, and
// a retry does not duplicate entries.
func (b *Bootstrap) Apply(ctx context.Context, dir string, store *memory.Store) error {
	if _, done := b.Next(); !done {
		return errors.New("persona: the bootstrap is not done: answer its questions first")
	}
	if store == nil {
		return errors.New("persona: no memory store for the profile")
	}
	for _, e := range b.result.Profile() {
		if _, err := store.Add(ctx, memory.ScopeUser, memory.TargetProfile, e); err != nil {
			return fmt.Errorf("persona: profile: %w", err)
		}
	}
	return Save(Persona{Dir: dir, Identity: b.result.Identity, Soul: b.result.Soul()})
}
