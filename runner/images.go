package runner

import (
	"fmt"
	"slices"

	"github.com/reinhq/rein/attachment"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tool"
)

// checkImages checks a submission's images again, whatever front sent
// them (the server checks them first, with its own problem statuses): each
// sniffed and within the limits of package attachment, together within the
// per-message ones. A bad one is session.ErrInvalid.
func checkImages(imgs []llm.Image) error {
	for i, img := range imgs {
		if _, err := attachment.New(fmt.Sprintf("image %d", i+1), img.Data, img.MediaType, attachment.DefaultLimits); err != nil {
			return fmt.Errorf("%w: %v", session.ErrInvalid, err)
		}
	}
	if err := attachment.CheckSet(imgs, attachment.DefaultLimits); err != nil {
		return fmt.Errorf("%w: %v", session.ErrInvalid, err)
	}
	return nil
}

// Attachments resolves the image attachments of a prompt typed in this
// setup's workspace: its `@file.png` mentions, relative to the workspace
// and never outside it, refusing the permission policy's sensitive files
// (the defaults and the settings' sensitive_files; a workspace's
// exceptions only once it is trusted, SPEC PERM-5).
func (s *Setup) Attachments() attachment.Resolver {
	return attachment.Resolver{Root: s.ws.Root, Sensitive: s.SensitiveFiles(), Limits: attachment.DefaultLimits}
}

// SensitiveFiles is the permission policy's set of sensitive files, for
// what reads files outside the tools (attachments).
func (s *Setup) SensitiveFiles() tool.SensitiveSet {
	return tool.NewSensitiveSet(append(slices.Clone(tool.DefaultSensitiveFiles),
		s.cfg.Loaded.Permissions(permission.Settings{}).SensitiveFiles...))
}
