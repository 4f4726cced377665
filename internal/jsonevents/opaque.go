package jsonevents

import "github.com/reinhq/rein/llm"

// KeepOpaque returns a reply's blocks with its opaque blocks kept only if
// every one of them could be: an [llm.Opaque] without Raw (over
// llm.MaxOpaqueBytes, not a JSON object with its type) takes the reply's
// other opaque blocks with it, since a server tool's call and its result
// must be replayed together or not at all. Each block dropped is counted
// (llm.DropOversize). blocks is modified in place.
func KeepOpaque(provider string, blocks []llm.Block) []llm.Block {
	bad := false
	for _, b := range blocks {
		if o, ok := b.(*llm.Opaque); ok && len(o.Raw) == 0 {
			bad = true
			break
		}
	}
	if !bad {
		return blocks
	}
	out := blocks[:0]
	for _, b := range blocks {
		if o, ok := b.(*llm.Opaque); ok {
			llm.RecordDrop(provider, llm.DropOversize, o.Type)
			continue
		}
		out = append(out, b)
	}
	return out
}
