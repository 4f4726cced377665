package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schema is a compiled input schema.
type Schema struct {
	resolved *jsonschema.Resolved
	// lazy, when set, compiles the schema at its first use (see
	// deferSchema); resolved is then nil.
	lazy func() (*Schema, error)
}

// deferSchema returns a Schema compiled at its first Validate, for the
// built-in tools: rein's own Go types describe their inputs, so their
// schemas cannot fail to compile (tool/builtin's tests compile every one),
// and compiling a dozen of them cost ~3 ms of CPU at every start before
// the first model request (issue 30, CLI-1). Schemas from outside
// (MCP servers, actions, skills, agents) are compiled when added, so a bad
// one is refused at once.
//
// A server builds a run's tools at every run, from the same few schemas:
// the Schema of each distinct document is shared by every set in the
// process (up to maxSharedSchemas documents; others get their own), so it
// is compiled once, not at each run's first call (issue 30: 3 % of a
// server's CPU). A compiled schema is only read when validating, so sets
// on several goroutines may share it.
func deferSchema(raw json.RawMessage) *Schema {
	key := string(raw)
	if s, ok := sharedSchemas.Load(key); ok {
		return s.(*Schema)
	}
	s := &Schema{lazy: sync.OnceValues(func() (*Schema, error) { return CompileSchema(json.RawMessage(key)) })}
	if sharedSchemaCount.Load() >= maxSharedSchemas {
		return s
	}
	got, loaded := sharedSchemas.LoadOrStore(key, s)
	if !loaded {
		sharedSchemaCount.Add(1)
	}
	return got.(*Schema)
}

// compileShared is CompileSchema for a schema from outside, compiled (and,
// when bad, refused) as it is added; a document compiled once is shared
// like the built-ins' (a server adds the task tool, whose schema names the
// workspace's agents, at every run). A bad document is not remembered.
func compileShared(raw json.RawMessage) (*Schema, error) {
	key := string(raw)
	if s, ok := compiledSchemas.Load(key); ok {
		return s.(*Schema), nil
	}
	s, err := CompileSchema(raw)
	if err != nil || sharedSchemaCount.Load() >= maxSharedSchemas {
		return s, err
	}
	if _, loaded := compiledSchemas.LoadOrStore(key, s); !loaded {
		sharedSchemaCount.Add(1)
	}
	return s, nil
}

// maxSharedSchemas bounds the distinct schema documents kept for the
// process's lifetime: rein's built-in tools have a few dozen; documents
// that vary with a workspace (a list of its names) or come from MCP
// servers must not grow the cache without end.
const maxSharedSchemas = 256

var (
	sharedSchemas     sync.Map // built-in schema document → *Schema compiled at first use
	compiledSchemas   sync.Map // other schema document → *Schema compiled
	sharedSchemaCount atomic.Int64
)

// CompileSchema compiles a JSON Schema document. An empty document accepts any
// JSON object.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	if len(raw) == 0 {
		return &Schema{}, nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	return &Schema{resolved: r}, nil
}

// Validate checks a call's input. The error names what is wrong in words the
// model can act on: which field, and what was expected (SPEC TOOL-1).
func (s *Schema) Validate(input json.RawMessage) error {
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(input, &v); err != nil {
		return fmt.Errorf("input is not valid JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return errors.New("input must be a JSON object")
	}
	if s.lazy != nil {
		compiled, err := s.lazy()
		if err != nil {
			return err
		}
		s = compiled
	}
	if s.resolved == nil {
		return nil
	}
	if err := s.resolved.Validate(v); err != nil {
		return errors.New(cleanSchemaError(err.Error()))
	}
	return nil
}

// cleanSchemaError turns the validator's "validating root: validating
// /properties/a/properties/b: type: …" into "field a.b: …", so the model reads
// which field is wrong and what was expected.
func cleanSchemaError(msg string) string {
	field := ""
	for strings.HasPrefix(msg, "validating ") {
		rest := msg[len("validating "):]
		j := strings.Index(rest, ": ")
		if j < 0 {
			break
		}
		if ptr := rest[:j]; ptr != "root" {
			field = fieldOf(ptr)
		}
		msg = rest[j+2:]
	}
	// Drop the keyword prefix ("type: ", "required: ").
	if j := strings.Index(msg, ": "); j > 0 && !strings.ContainsAny(msg[:j], " \"") {
		msg = msg[j+2:]
	}
	if field != "" {
		return "field " + strconv.Quote(field) + ": " + msg
	}
	return msg
}

// fieldOf turns a JSON pointer into the schema ("/properties/a/items/properties/b")
// into a field path ("a[].b").
func fieldOf(ptr string) string {
	var b strings.Builder
	parts := strings.Split(strings.Trim(ptr, "/"), "/")
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case "properties":
			if i+1 < len(parts) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(parts[i+1])
				i++
			}
		case "items":
			b.WriteString("[]")
		}
	}
	return b.String()
}
