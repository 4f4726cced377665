// Package attachment turns what a user attaches to a message into llm
// content (SPEC LOOP-2: the user message holds text and images): image
// files named with `rein run --image FILE`, `@file.png` mentions in a
// prompt, paths pasted or dropped into the terminal UI, and base64 images
// posted to the API.
//
// Every image is hostile until checked: its type is sniffed from its
// bytes, never trusted from a name or a declared media type (a declared
// type that differs from the bytes is refused), only PNG, JPEG, GIF and
// WebP are taken, and [Limits] bound the bytes of one image, of one
// message's images, and their count. The errors wrap [ErrTooLarge],
// [ErrTooMany], [ErrUnsupported], [ErrMismatch] or [ErrInvalid], which the
// server answers with 413, 415 and 422 problems.
//
// A mention (`@path`, or `@"path with spaces"`) of an image file attaches
// it; the path is relative to the workspace, and a file outside the
// workspace (symlinks resolved) or a sensitive one (the permission
// policy's set, tool.SensitiveSet) is refused with an error. A mention of
// any other file is left as written: unlike Claude Code, which pastes the
// file's contents into the prompt, rein lets the model read it with
// read_file, where the permission policy, hooks and audit apply. A custom
// slash command's body is different: written by the user (or a trusted
// workspace) to paste files, its `@path` of a text file is pasted as Claude
// Code does ([Resolver.Text], within the same bounds). The files:
// image.go (limits, sniffing, base64), file.go (reading an image file),
// mention.go (finding and resolving mentions), text.go (a text file a
// command pastes), message.go (the user message).
package attachment
