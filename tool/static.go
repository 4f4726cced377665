package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/reinhq/rein/llm"
)

// StaticSchema is the input schema of a tool taking In whose schema does
// not depend on how the tool is made: inferred from In (and adjusted by
// tune) once per process, at its first use. The built-in tools keep
// theirs in package variables and pass them to [DefineStatic]: inferring
// and encoding their schemas costs ~1 ms of CPU, which a process paid
// again for every conversation it set up — each session a server opens,
// each /clear of the terminal UI (issue 30, CLI-1).
type StaticSchema[In any] struct {
	raw func() json.RawMessage
}

// NewStaticSchema declares the input schema of tools taking In, adjusted
// by tune (see [Define]); tune must depend on nothing but the schema. Call
// it from a package variable's initialiser: it builds nothing until the
// schema is first needed.
func NewStaticSchema[In any](tune func(*jsonschema.Schema)) StaticSchema[In] {
	return StaticSchema[In]{raw: sync.OnceValue(func() json.RawMessage {
		var in In
		return inferSchema[In](fmt.Sprintf("%T", in), tune)
	})}
}

// DefineStatic is [Define] with a schema declared by [NewStaticSchema].
func DefineStatic[In any](name, description string, meta Meta, schema StaticSchema[In],
	fn func(ctx context.Context, call Call, in In) (Result, error)) Tool {
	// A copy: the tool's spec is its own, whatever a caller does with it.
	raw := slices.Clone(schema.raw())
	return &typed[In]{spec: llm.ToolSpec{Name: name, Description: description, InputSchema: raw}, meta: meta, fn: fn}
}
