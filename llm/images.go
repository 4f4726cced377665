package llm

import (
	"bytes"
	"strconv"
)

// MoveToolResultImages returns msgs with every image inside a tool result moved
// into a user message placed right after the message holding that result
// (SPEC LOOP-8), for vendors that accept images only from the user. The tool
// result keeps a text note naming what moved, so the pairing of calls and
// results is untouched. msgs is never modified.
func MoveToolResultImages(msgs []Message) []Message {
	if !hasToolResultImages(msgs) {
		return msgs
	}
	out := make([]Message, 0, len(msgs)+1)
	for _, m := range msgs {
		if !hasToolResultImages([]Message{m}) {
			out = append(out, m) // untouched: same content slice
			continue
		}
		var moved []Block
		content := make([]Block, 0, len(m.Content))
		for _, b := range m.Content {
			r, ok := b.(*ToolResult)
			if !ok || !resultHasImage(r) {
				content = append(content, b)
				continue
			}
			c := *r
			c.Content = make([]Block, 0, len(r.Content))
			n := 0
			for _, rb := range r.Content {
				if img, ok := rb.(*Image); ok {
					moved = append(moved, img)
					n++
					continue
				}
				c.Content = append(c.Content, rb)
			}
			c.Content = append(c.Content, &Text{Text: imageNote(n)})
			content = append(content, &c)
		}
		m.Content = content
		out = append(out, m)
		if len(moved) > 0 {
			blocks := append([]Block{&Text{Text: "Images returned by the tool calls above:"}}, moved...)
			out = append(out, Message{Role: RoleUser, Content: blocks})
		}
	}
	return out
}

// ReplaceImages returns msgs with every image replaced by a text note, for
// models without vision (SPEC LOOP-8). msgs is never modified.
func ReplaceImages(msgs []Message) []Message {
	if !hasImages(msgs) {
		return msgs
	}
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		m.Content = replaceImageBlocks(m.Content)
		out[i] = m
	}
	return out
}

func replaceImageBlocks(blocks []Block) []Block {
	out := make([]Block, 0, len(blocks))
	for _, b := range blocks {
		switch b := b.(type) {
		case *Image:
			out = append(out, &Text{Text: "[image omitted: the model cannot see images]"})
		case *ToolResult:
			c := *b
			c.Content = replaceImageBlocks(b.Content)
			out = append(out, &c)
		default:
			out = append(out, b)
		}
	}
	return out
}

func imageNote(n int) string {
	if n == 1 {
		return "[1 image attached in the next user message]"
	}
	return "[" + strconv.Itoa(n) + " images attached in the next user message]"
}

func resultHasImage(r *ToolResult) bool {
	for _, b := range r.Content {
		if _, ok := b.(*Image); ok {
			return true
		}
	}
	return false
}

func hasToolResultImages(msgs []Message) bool {
	for _, m := range msgs {
		for _, b := range m.Content {
			if r, ok := b.(*ToolResult); ok && resultHasImage(r) {
				return true
			}
		}
	}
	return false
}

func hasImages(msgs []Message) bool {
	for _, m := range msgs {
		for _, b := range m.Content {
			switch b := b.(type) {
			case *Image:
				return true
			case *ToolResult:
				if resultHasImage(b) {
					return true
				}
			}
		}
	}
	return false
}

// SniffImage returns the media type of data from its magic bytes — PNG,
// JPEG, GIF or WebP, the types every vision vendor takes — or "" when it is
// none of them. A declared type is never trusted over it.
func SniffImage(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "image/gif"
	case len(data) >= 12 && bytes.Equal(data[:4], []byte("RIFF")) && bytes.Equal(data[8:12], []byte("WEBP")):
		return "image/webp"
	}
	return ""
}
