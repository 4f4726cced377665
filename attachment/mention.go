package attachment

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool"
)

// Mention is an `@path` in a prompt: Path as written (quotes removed),
// text[Start:End] the whole mention with its @.
type Mention struct {
	Path       string
	Start, End int
}

// trailing are the characters a mention does not end with: the sentence's
// punctuation after it ("look at @a.png, then …").
const trailing = ".,;:!?)]}'\""

// Mentions finds the mentions in text: an @ at the start or after white
// space or an opening bracket, followed by a path up to the next white
// space (less trailing punctuation), or by a double-quoted path that may
// hold spaces. An e-mail address (a@b.c) is not one.
func Mentions(text string) []Mention {
	var out []Mention
	for i := 0; i < len(text); i++ {
		if text[i] != '@' {
			continue
		}
		if i > 0 {
			r, _ := utf8.DecodeLastRuneInString(text[:i])
			if !unicode.IsSpace(r) && !strings.ContainsRune("([{", r) {
				continue
			}
		}
		start := i
		rest := text[i+1:]
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end <= 0 || strings.ContainsAny(rest[1:1+end], "\n\r") || !utf8.ValidString(rest[1:1+end]) {
				continue
			}
			out = append(out, Mention{Path: rest[1 : 1+end], Start: start, End: start + 1 + end + 2})
			i = start + 1 + end + 1
			continue
		}
		n := strings.IndexFunc(rest, unicode.IsSpace)
		if n < 0 {
			n = len(rest)
		}
		p := strings.TrimRight(rest[:n], trailing)
		if p == "" || !utf8.ValidString(p) {
			continue
		}
		out = append(out, Mention{Path: p, Start: start, End: start + 1 + len(p)})
		i = start + len(p)
	}
	return out
}

// Named is an image and the name the user gave it (a path, or "image 2").
type Named struct {
	Name  string
	Image llm.Image
}

// Resolver resolves the image mentions of prompts in one workspace.
type Resolver struct {
	// Root is the workspace's directory; mentions are relative to it, and
	// no file outside it is attached.
	Root string
	// Sensitive are the files never attached (the permission policy's).
	Sensitive tool.SensitiveSet
	Limits    Limits
}

// Images returns the images the prompt's mentions name, each once, in the
// order of their first mention. A mention that does not name an image by
// its extension is no attachment and is left alone; one that does must be
// an image file in the workspace, not a sensitive one.
func (r Resolver) Images(prompt string) ([]Named, error) {
	var out []Named
	seen := map[string]bool{}
	for _, m := range Mentions(prompt) {
		if !LooksLikeImage(m.Path) {
			continue
		}
		real, err := r.resolve(m.Path)
		if err != nil {
			return nil, err
		}
		if seen[real] {
			continue
		}
		seen[real] = true
		img, err := readImage("@"+m.Path, real, r.Limits)
		if err != nil {
			return nil, err
		}
		out = append(out, Named{Name: m.Path, Image: img})
	}
	return out, nil
}

// resolve returns the real path of a mention, refusing one outside the
// workspace or sensitive.
func (r Resolver) resolve(p string) (string, error) {
	root, err := filepath.EvalSymlinks(r.Root)
	if err != nil {
		return "", fmt.Errorf("@%s: %w: the workspace %s: %v", p, ErrInvalid, r.Root, err)
	}
	abs := joinRoot(r.Root, p)
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("@%s: %w: %v in the workspace %s; fix the path, or write the @ apart from it", p, ErrInvalid, noSuchFile(err), r.Root)
	}
	if !inside(root, real) || (!inside(r.Root, abs) && !inside(root, abs)) {
		return "", fmt.Errorf("@%s: %w: the file is outside the workspace %s; attach it with --image, or copy it into the workspace",
			p, ErrInvalid, r.Root)
	}
	if pat, ok := r.Sensitive.Match(abs, real); ok {
		return "", fmt.Errorf("@%s: %w: it is a sensitive file (%s); rein attaches none", p, ErrInvalid, pat)
	}
	return real, nil
}

// joinRoot is p, relative to root unless absolute, cleaned.
func joinRoot(root, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	return filepath.Clean(p)
}

// inside reports whether p is base or lies below it.
func inside(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
