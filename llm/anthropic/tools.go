package anthropic

import (
	"encoding/json"
	"sync"

	"github.com/reinhq/rein/llm"
)

// toolJSON keeps each tool declaration's JSON object as json.Marshal
// writes its toolParam (without a cache breakpoint), so a turn does not
// validate, compact and escape every schema and description again: a run
// offers the same tools on every turn, and every run of a process offers
// mostly the same. An entry is found by the schema's bytes and then the
// name and description, so it is only ever used for the very declaration
// it was made from. It holds at most maxToolJSONBytes; past that,
// declarations are encoded each time, as before (a hostile MCP server's
// ever new schemas cannot grow it).
var toolJSON = &toolCache{bySchema: map[string][]cachedTool{}}

// maxToolJSONBytes bounds what toolJSON holds: the schemas, names,
// descriptions and encodings together.
const maxToolJSONBytes = 4 << 20

type toolCache struct {
	mu       sync.RWMutex
	bySchema map[string][]cachedTool
	bytes    int
}

type cachedTool struct {
	name, description string
	json              []byte
}

// encode returns t's JSON object, exactly as json.Marshal writes the
// toolParam toTool makes of it; an invalid schema is toTool's error.
func (c *toolCache) encode(t llm.ToolSpec) ([]byte, error) {
	c.mu.RLock()
	for _, e := range c.bySchema[string(t.InputSchema)] {
		if e.name == t.Name && e.description == t.Description {
			c.mu.RUnlock()
			return e.json, nil
		}
	}
	c.mu.RUnlock()
	tool, err := toTool(t)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(tool)
	if err != nil {
		return nil, err
	}
	size := 2*len(t.InputSchema) + len(t.Name) + len(t.Description) + len(b)
	c.mu.Lock()
	if c.bytes+size <= maxToolJSONBytes {
		key := string(t.InputSchema)
		c.bySchema[key] = append(c.bySchema[key], cachedTool{name: t.Name, description: t.Description, json: b})
		c.bytes += size
	}
	c.mu.Unlock()
	return b, nil
}

// appendTools appends `,"tools":[…]` to a JSON object's members: each
// tool's cached object, the last with the prompt-cache breakpoint, as
// json.Marshal writes the toolParam list (messagesRequest's last field),
// then tail. b grows once.
func appendTools(b []byte, tools []llm.ToolSpec, tail string) ([]byte, error) {
	if len(tools) == 0 {
		return append(b, tail...), nil
	}
	const open, breakpoint = `,"tools":[`, `,"cache_control":{"type":"ephemeral"}}`
	objs := make([][]byte, len(tools))
	n := len(b) + len(open) + len(breakpoint) + len(tools) + len(tail)
	for i, t := range tools {
		obj, err := toolJSON.encode(t)
		if err != nil {
			return nil, err
		}
		objs[i] = obj
		n += len(obj)
	}
	out := make([]byte, 0, n)
	out = append(append(out, b...), open...)
	for i, obj := range objs {
		if i > 0 {
			out = append(out, ',')
		}
		if i < len(objs)-1 {
			out = append(out, obj...)
			continue
		}
		// The breakpoint is toolParam's last field: before the closing brace.
		out = append(append(out, obj[:len(obj)-1]...), breakpoint...)
	}
	out = append(out, ']')
	return append(out, tail...), nil
}
