package cli

import (
	"context"
	"encoding/base64"
	"fmt"
	"iter"
	"path/filepath"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/attachment"
	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
)

// Submit implements tui.Backend: a run with a new id of the prompt's text
// and images (the files attached and the `@file.png` mentions, see
// [engine.userMessage]), a custom slash command expanded first. An
// attachment that cannot be read, or a command that cannot be expanded,
// ends the run at once with the error.
func (e *engine) Submit(ctx context.Context, p tui.Prompt, approver permission.Approver) iter.Seq2[agent.Event, error] {
	return e.submitPrompt(ctx, p.Text, p.Images, approver) // a custom slash command is expanded (slashcmd.go)
}

// userMessage is the user message of a prompt (SPEC LOOP-2): its text,
// then the images its `@file.png` mentions name in the workspace (never
// outside it, never a sensitive file), then the image files given
// (`rein run --image`, files dropped in the terminal UI: the user named
// them, so they may be anywhere but in a sensitive file). nil when there
// is neither text nor image: the run continues the conversation.
func (e *engine) userMessage(text string, files []string) (*llm.Message, error) {
	named, err := e.Setup().Attachments().Images(text)
	if err != nil {
		return nil, fmt.Errorf("the prompt's mention %w", err)
	}
	given, err := readImages(files, e.Setup().SensitiveFiles())
	if err != nil {
		return nil, err
	}
	return attachment.Message(text, append(named, given...), attachment.DefaultLimits)
}

// noteNoVision tells the user of rein run that the model cannot see the
// message's images (the run's start event says so too, for stream-json
// and API clients).
func (e *engine) noteNoVision(msg *llm.Message) {
	if m := e.Model(); msg != nil && !m.Caps.Vision {
		n := 0
		for _, b := range msg.Content {
			if _, ok := b.(*llm.Image); ok {
				n++
			}
		}
		if n > 0 {
			e.note("%s cannot see images: it gets a note in place of the %d attached (SPEC LOOP-8); "+
				"a model with vision sees them (rein provider list)", m.Label, n)
		}
	}
}

// readImages reads the image files the user attached.
func readImages(files []string, sensitive tool.SensitiveSet) ([]attachment.Named, error) {
	var out []attachment.Named
	for _, f := range files {
		img, err := attachment.ReadFile(f, sensitive, attachment.DefaultLimits)
		if err != nil {
			return nil, fmt.Errorf("--image %w", err)
		}
		out = append(out, attachment.Named{Name: filepath.Base(f), Image: img})
	}
	return out, nil
}

// remoteImages are the --image files of a run on a server, base64 for
// the API (the server checks them again). @mentions are not resolved for
// a server: its workspace is not this directory.
func remoteImages(files []string) ([]api.Image, error) {
	named, err := readImages(files, tool.NewSensitiveSet(tool.DefaultSensitiveFiles))
	if err != nil {
		return nil, err
	}
	imgs := make([]llm.Image, len(named))
	for i, n := range named {
		imgs[i] = n.Image
	}
	if err := attachment.CheckSet(imgs, attachment.DefaultLimits); err != nil {
		return nil, fmt.Errorf("--image: %w", err)
	}
	out := make([]api.Image, len(imgs))
	for i, img := range imgs {
		out[i] = api.Image{MediaType: img.MediaType, Data: base64.StdEncoding.EncodeToString(img.Data)}
	}
	return out, nil
}
