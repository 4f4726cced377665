package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type staticIn struct {
	Path  string   `json:"path" jsonschema:"file to read"`
	Limit int      `json:"limit,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

func tuneStatic(s *jsonschema.Schema) {
	one := 1.0
	s.Properties["limit"].Minimum = &one
}

var testStatic = NewStaticSchema[staticIn](tuneStatic)

func runStatic(_ context.Context, _ Call, in staticIn) (Result, error) { return Text(in.Path), nil }

// CLI-1 (issue 30): a tool defined with a static schema offers the very
// schema Define infers (same bytes: the request and its prompt cache do
// not change), decodes and checks its input the same way, and owns its
// copy of the schema; tools defined at once on several goroutines share
// one inference safely (go test -race).
func TestStaticSchemaSameAsDefine_CLI1(t *testing.T) {
	want := Define("t", "d", Meta{}, tuneStatic, runStatic).Spec().InputSchema
	var wg sync.WaitGroup
	specs := make([]json.RawMessage, 8)
	for i := range specs {
		wg.Go(func() { specs[i] = DefineStatic("t", "d", Meta{}, testStatic, runStatic).Spec().InputSchema })
	}
	wg.Wait()
	for i, got := range specs {
		if !bytes.Equal(got, want) {
			t.Fatalf("tool %d: schema\n%s\nwant\n%s", i, got, want)
		}
	}
	specs[0][0] = 'x' // one tool's copy: the others' and the next tool's are untouched
	if got := DefineStatic("t", "d", Meta{}, testStatic, runStatic).Spec().InputSchema; !bytes.Equal(got, want) || !bytes.Equal(specs[1], want) {
		t.Fatalf("schemas share their bytes: %s", got)
	}

	tl := DefineStatic("t", "d", Meta{}, testStatic, runStatic)
	s, err := NewSet(OriginBuiltin, tl)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := s.Get("t")
	for _, tc := range []struct {
		input string
		ok    bool
	}{
		{`{"path":"a"}`, true},
		{`{"path":"a","limit":0}`, false}, // the tune's minimum
		{`{"limit":2}`, false},            // path is required
		{`{"path":"a","tags":null}`, false},
	} {
		if err := e.Schema.Validate(json.RawMessage(tc.input)); (err == nil) != tc.ok {
			t.Errorf("Validate(%s) = %v, want ok %v", tc.input, err, tc.ok)
		}
	}
	res, err := tl.Run(context.Background(), Call{Input: json.RawMessage(`{"path":"p"}`)})
	if err != nil || res.TextOf() != "p" {
		t.Errorf("Run = %v, %v", res, err)
	}
}

type generatedIn struct {
	A string `json:"a"`
}

var (
	generatedTunes int
	testGenerated  = NewStaticSchema[generatedIn](func(*jsonschema.Schema) { generatedTunes++ })
)

// CLI-1 (issue 30): a registered (generated) schema is taken as it is —
// nothing is inferred or tuned at run time — and DeclaredSchemas, what a
// package's generated file is checked against, infers every declaration
// of the package, generated or not.
func TestStaticSchemaGenerated_CLI1(t *testing.T) {
	const name = "github.com/reinhq/rein/tool.generatedIn"
	const gen = `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`
	RegisterSchemas(map[string]string{name: gen})
	run := func(context.Context, Call, generatedIn) (Result, error) { return Text(""), nil }
	if got := DefineStatic("g", "d", Meta{}, testGenerated, run).Spec().InputSchema; string(got) != gen || generatedTunes != 0 {
		t.Fatalf("schema %s (tuned %d times), want the registered one, untuned", got, generatedTunes)
	}
	declared := DeclaredSchemas("github.com/reinhq/rein/tool")
	if _, ok := declared[name]; !ok || generatedTunes != 1 {
		t.Errorf("DeclaredSchemas did not infer %s (tuned %d times)", name, generatedTunes)
	}
	want := Define("t", "d", Meta{}, tuneStatic, runStatic).Spec().InputSchema
	if got := declared["github.com/reinhq/rein/tool.staticIn"]; !bytes.Equal(got, want) {
		t.Errorf("DeclaredSchemas: staticIn = %s, want %s", got, want)
	}
	if len(DeclaredSchemas("github.com/reinhq/rein/tool/builtin")) != 0 {
		t.Error("DeclaredSchemas: another package's declarations")
	}
}
