package tui

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/reinhq/rein/attachment"
)

// Prompt is what the user sends: the text, and the image files attached
// to it (paths dropped or pasted into the input box). Images are read and
// checked by the backend.
type Prompt struct {
	Text   string
	Images []string
}

// imageToken is the placeholder a dropped image leaves in the input box;
// deleting it from the text drops the image.
var imageToken = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[Image #([0-9]+)\]`) })

// pastedImage returns the image file a paste names — a terminal's drop of
// one file: a path, maybe quoted, with backslash-escaped spaces, or a
// file:// URL; relative to dir — or "" when the paste is anything else
// (it is then typed as text).
func pastedImage(content, dir string) string {
	p := strings.TrimSpace(content)
	if p == "" || strings.ContainsAny(p, "\n\r") {
		return ""
	}
	if len(p) >= 2 && (p[0] == '\'' || p[0] == '"') && p[len(p)-1] == p[0] {
		p = p[1 : len(p)-1]
	} else {
		p = strings.ReplaceAll(p, `\ `, " ")
	}
	if strings.HasPrefix(p, "file://") {
		u, err := url.Parse(p)
		if err != nil || (u.Host != "" && u.Host != "localhost") {
			return ""
		}
		p = u.Path
	}
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[2:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if !attachment.LooksLikeImage(p) {
		return ""
	}
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return p
}

// attachImage keeps path as the next image of the input box and returns
// its placeholder.
func (m *model) attachImage(path string) string {
	if m.images == nil {
		m.images = map[int]string{}
	}
	m.imageSeq++
	m.images[m.imageSeq] = path
	return "[Image #" + strconv.Itoa(m.imageSeq) + "]"
}

// prompt is the prompt of a submitted line: its text and the images whose
// placeholders it still holds, in the order they appear, each once.
func (m *model) prompt(text string) Prompt {
	p := Prompt{Text: text}
	seen := map[int]bool{}
	for _, sub := range imageToken().FindAllStringSubmatch(text, -1) {
		n, err := strconv.Atoi(sub[1])
		if err != nil || seen[n] || m.images[n] == "" {
			continue
		}
		seen[n] = true
		p.Images = append(p.Images, m.images[n])
	}
	return p
}
