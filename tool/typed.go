package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/reinhq/rein/llm"
)

// New returns a tool that decodes its input into In and calls fn. The input
// schema is inferred from In: exported fields by their json names, fields
// without omitempty required, the `jsonschema:"…"` tag as the description. It
// panics if In has no JSON Schema (a programming error, found at start-up).
func New[In any](name, description string, meta Meta, fn func(ctx context.Context, call Call, in In) (Result, error)) Tool {
	return Define(name, description, meta, nil, fn)
}

// Define is [New] with a hook to adjust the inferred schema: enums, bounds,
// descriptions that tags cannot say. Slices are inferred as plain arrays (not
// "null or array"): the model should send a list.
func Define[In any](name, description string, meta Meta, tune func(*jsonschema.Schema),
	fn func(ctx context.Context, call Call, in In) (Result, error)) Tool {
	raw := inferSchema[In](name, tune)
	return &typed[In]{spec: llm.ToolSpec{Name: name, Description: description, InputSchema: raw}, meta: meta, fn: fn}
}

// inferSchema infers In's schema, adjusts it with tune and encodes it. It
// panics, naming what, when In has none.
func inferSchema[In any](what string, tune func(*jsonschema.Schema)) json.RawMessage {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", what, err))
	}
	plainArrays(s)
	if tune != nil {
		tune(s)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", what, err))
	}
	return raw
}

type typed[In any] struct {
	spec llm.ToolSpec
	meta Meta
	fn   func(context.Context, Call, In) (Result, error)
}

func (t *typed[In]) Spec() llm.ToolSpec { return t.spec }
func (t *typed[In]) Meta() Meta         { return t.meta }

func (t *typed[In]) Run(ctx context.Context, call Call) (Result, error) {
	var in In
	if len(call.Input) > 0 {
		if err := json.Unmarshal(call.Input, &in); err != nil {
			return Errorf("invalid input for %s: %v", t.spec.Name, err), nil
		}
	}
	return t.fn(ctx, call, in)
}

// plainArrays turns the inferred ["null","array"] type of slices into
// "array".
func plainArrays(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" && s.Types[1] == "array" {
		s.Types, s.Type = nil, "array"
	}
	plainArrays(s.Items)
	for _, p := range s.Properties {
		plainArrays(p)
	}
}
