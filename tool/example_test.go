package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/reinhq/rein/tool"
)

// greetIn is a tool's typed input. Fields without omitempty are required;
// the jsonschema tag is the field's description the model reads.
type greetIn struct {
	Name  string `json:"name" jsonschema:"who to greet"`
	Times int    `json:"times,omitempty" jsonschema:"how many times to greet, 1 when left out"`
}

// ExampleNew defines a tool from a typed Go function: the input's JSON
// Schema is derived from the struct (SPEC TOOL-1), and the function gets
// the input already decoded.
func ExampleNew() {
	greet := tool.New("greet", "Greets someone.", tool.Meta{ReadOnly: true, Category: tool.CategoryRead},
		func(ctx context.Context, call tool.Call, in greetIn) (tool.Result, error) {
			n := max(in.Times, 1)
			return tool.Text(strings.TrimSpace(strings.Repeat("Hello, "+in.Name+"! ", n))), nil
		})

	spec := greet.Spec()
	fmt.Println(spec.Name, "-", spec.Description)
	var schema bytes.Buffer
	_ = json.Indent(&schema, spec.InputSchema, "", "  ")
	fmt.Println(schema.String())

	res, err := greet.Run(context.Background(), tool.Call{ID: "c1", Name: "greet", Input: json.RawMessage(`{"name":"Ada","times":2}`)})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(res.TextOf())
	// Output:
	// greet - Greets someone.
	// {
	//   "type": "object",
	//   "properties": {
	//     "name": {
	//       "type": "string",
	//       "description": "who to greet"
	//     },
	//     "times": {
	//       "type": "integer",
	//       "description": "how many times to greet, 1 when left out"
	//     }
	//   },
	//   "required": [
	//     "name"
	//   ],
	//   "additionalProperties": false
	// }
	// Hello, Ada! Hello, Ada!
}

// ExampleDefine tunes the derived schema where struct tags cannot say
// enough: here an enum.
func ExampleDefine() {
	type unitIn struct {
		Unit string `json:"unit"`
	}
	convert := tool.Define("temperature", "Reports the temperature in a unit.", tool.Meta{ReadOnly: true, Category: tool.CategoryRead},
		func(s *jsonschema.Schema) { s.Properties["unit"].Enum = []any{"celsius", "fahrenheit"} },
		func(ctx context.Context, call tool.Call, in unitIn) (tool.Result, error) {
			if in.Unit == "fahrenheit" {
				return tool.Text("39°F"), nil
			}
			return tool.Text("4°C"), nil
		})
	fmt.Println(string(convert.Spec().InputSchema))
	// Output:
	// {"type":"object","properties":{"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["unit"],"additionalProperties":false}
}

// ExampleSet registers tools in a Set, the registry the run loop dispatches
// from, and makes a call the way the loop does: look the tool up, validate
// the input against its schema, run it. An input that does not fit the
// schema is refused with an error that says which field is wrong, before the
// tool sees it.
func ExampleSet() {
	greet := tool.New("greet", "Greets someone.", tool.Meta{ReadOnly: true, Category: tool.CategoryRead},
		func(ctx context.Context, call tool.Call, in greetIn) (tool.Result, error) {
			return tool.Text("Hello, " + in.Name + "!"), nil
		})
	shout := tool.New("shout", "Shouts a word.", tool.Meta{Category: tool.CategoryOther},
		func(ctx context.Context, call tool.Call, in struct {
			Word string `json:"word"`
		}) (tool.Result, error) {
			return tool.Text(strings.ToUpper(in.Word) + "!"), nil
		})
	set, err := tool.NewSet(tool.OriginBuiltin, greet, shout)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("tools:", set.Names())

	// A second tool of the same name is refused.
	if err := set.Add(tool.OriginAction, greet); err != nil {
		fmt.Println("add:", err)
	}

	call := func(name, input string) {
		e, ok := set.Get(name)
		if !ok {
			fmt.Printf("%s: unknown tool; did you mean %v?\n", name, set.Closest(name, 1))
			return
		}
		if err := e.Schema.Validate(json.RawMessage(input)); err != nil {
			fmt.Printf("%s: refused: %v\n", name, err)
			return
		}
		res, err := e.Tool.Run(context.Background(), tool.Call{ID: "c1", Name: name, Input: json.RawMessage(input)})
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Printf("%s (%s, read-only %v): %s\n", name, e.Origin, e.Meta.ReadOnly, res.TextOf())
	}
	call("greet", `{"name":"Ada"}`)
	call("shout", `{"word":"hey"}`)
	call("greet", `{"name":42}`)
	call("greet", `{}`)
	call("gret", `{"name":"Ada"}`)
	// Output:
	// tools: [greet shout]
	// add: tool: "greet" is registered twice; rename one of them
	// greet (builtin, read-only true): Hello, Ada!
	// shout (builtin, read-only false): HEY!
	// greet: refused: field "name": 42 has type "integer", want "string"
	// greet: refused: missing properties: ["name"]
	// gret: unknown tool; did you mean [greet]?
}
