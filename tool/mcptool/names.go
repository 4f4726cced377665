package mcptool

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxNameLen is the longest tool name rein gives the model: the limit of
// the vendors' tool-name pattern ^[a-zA-Z0-9_-]{1,64}$.
const MaxNameLen = 64

// ToolName is the name under which rein offers a server's tool:
// mcp__<server>__<tool>, each character outside [a-zA-Z0-9_-] replaced by
// "_". A name longer than [MaxNameLen] is cut and ends with "_" and eight hex
// digits of a hash of the server and tool names, so that it stays unique and
// the same from run to run.
func ToolName(server, tool string) string {
	name := "mcp__" + sanitize(server) + "__" + sanitize(tool)
	if len(name) <= MaxNameLen {
		return name
	}
	return hashed(name, server, tool)
}

// hashed cuts name to leave room for "_" and eight hex digits of a hash of
// server and tool, and appends them.
func hashed(name, server, tool string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	const room = MaxNameLen - 9
	if len(name) > room {
		name = name[:room]
	}
	return name + "_" + hex.EncodeToString(sum[:4])
}

// sanitize replaces every character outside [a-zA-Z0-9_-] by "_" (one per
// character, not per byte).
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}
