package gateway

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/reinhq/rein/attachment"
	"github.com/reinhq/rein/llm"
)

// unsafeName matches what a kept file's name may not hold.
var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })

// attach handles a message's files (SPEC LOOP-2): an image that passes
// package attachment's checks — its type read from its bytes (PNG, JPEG,
// GIF, WebP; what the platform declared does not count), 5 MiB each, 20
// images and 20 MiB a message — goes into the user message, so the model
// sees it even in a chat without a workspace; every file is also kept
// under the route's workspace inbox/ when it has one (the model reads it
// with its tools). It returns the lines telling the model what came and
// where it is, and the images to send.
func (g *Gateway) attach(r *route, m Inbound) (string, []llm.Image) {
	var lines []string
	var images []llm.Image
	for i, a := range m.Attachments {
		name := strings.Trim(unsafeName().ReplaceAllString(filepath.Base(a.Name), "_"), "._")
		if name == "" {
			name = "file"
		}
		img, why := attachImage(name, a, images)
		if why == "" {
			images = append(images, img)
		}
		what := "a file"
		switch {
		case why == "":
			what = "an image, attached to this message"
		case why != "not an image":
			what = "an image that could not be attached (" + why + ")"
		}
		desc := fmt.Sprintf("(%s, %d bytes)", a.MIME, len(a.Data))
		if why == "" {
			desc = fmt.Sprintf("(%s, %d bytes)", img.MediaType, len(a.Data))
		}
		if r.Workspace == "" {
			if why == "" {
				lines = append(lines, fmt.Sprintf("[the user sent %s: %s %s]", what, name, desc))
			} else {
				lines = append(lines, fmt.Sprintf("[the user sent %s, %s %s; this chat has no workspace to keep it]", what, name, desc))
			}
			continue
		}
		rel, err := g.keepFile(r, m, i, name, a.Data)
		if err != nil {
			g.log.Warn("an attachment could not be kept", "channel", r.name, "err", err)
			lines = append(lines, fmt.Sprintf("[the user sent %s, %s, which could not be saved]", what, name))
			continue
		}
		lines = append(lines, fmt.Sprintf("[the user sent %s: %s %s]", what, rel, desc))
	}
	return strings.Join(lines, "\n"), images
}

// attachImage checks a as one more image of a message that has images
// already; why says what stops it ("not an image" for another file).
func attachImage(name string, a Attachment, images []llm.Image) (llm.Image, string) {
	if attachment.Sniff(a.Data) == "" && !strings.HasPrefix(strings.ToLower(a.MIME), "image/") {
		return llm.Image{}, "not an image"
	}
	img, err := attachment.New(name, a.Data, "", attachment.DefaultLimits)
	if err == nil {
		err = attachment.CheckSet(append(images[:len(images):len(images)], img), attachment.DefaultLimits)
	}
	if err != nil {
		return llm.Image{}, err.Error()
	}
	return img, ""
}

// keepFile saves one file of a message under the route's workspace
// inbox/ and returns its path there.
func (g *Gateway) keepFile(r *route, m Inbound, i int, name string, data []byte) (string, error) {
	rel := filepath.Join("inbox", fmt.Sprintf("%s-%s-%d-%s", g.cfg.Now().UTC().Format("20060102T150405"), unsafeName().ReplaceAllString(m.ID, "_"), i, name))
	path := filepath.Join(r.Workspace, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	return rel, os.WriteFile(path, data, 0o600)
}
