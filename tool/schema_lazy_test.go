package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
)

// rawTool is a tool whose input schema is given as bytes, as an MCP
// server or an action declares it.
type rawTool struct{ schema string }

func (r rawTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "raw", Description: "d", InputSchema: json.RawMessage(r.schema)}
}
func (rawTool) Meta() Meta { return Meta{} }
func (rawTool) Run(context.Context, Call) (Result, error) {
	return Text("ok"), nil
}

// CLI-1 (issue 30): a built-in tool's schema is compiled at its first
// call, not when the set is built; a schema from outside is still
// compiled, and refused, when added. Either way a call is checked against
// the schema.
func TestSchemaCompiledWhenNeeded_CLI1(t *testing.T) {
	const good = `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`
	const bad = `{"type":"object","properties":{"n":{"$ref":"#/$defs/missing"}}}`
	for _, origin := range []Origin{OriginBuiltin, OriginMCP, OriginAction} {
		s, err := NewSet(origin, rawTool{good})
		if err != nil {
			t.Fatalf("%s: %v", origin, err)
		}
		e, _ := s.Get("raw")
		for _, tc := range []struct{ input, want string }{
			{`{"n":1}`, ""},
			{`{}`, "n"},
			{`{"n":"x"}`, "integer"},
			{`[1]`, "JSON object"},
		} {
			err := e.Schema.Validate(json.RawMessage(tc.input))
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: Validate(%s) = %v, want %q", origin, tc.input, err, tc.want)
			}
		}
	}
	// Attack row: a hostile schema from an MCP server or an action is
	// refused when added, never reaches a call.
	for _, origin := range []Origin{OriginMCP, OriginAction, OriginSkill, OriginAgent} {
		if _, err := NewSet(origin, rawTool{bad}); err == nil || !strings.Contains(err.Error(), `tool "raw"`) {
			t.Errorf("%s: bad schema added: %v", origin, err)
		}
	}
	// A built-in's bad schema (a bug in rein) fails its calls, saying why.
	s, err := NewSet(OriginBuiltin, rawTool{bad})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := s.Get("raw")
	if err := e.Schema.Validate(json.RawMessage(`{"n":1}`)); err == nil || !strings.Contains(err.Error(), "input schema") {
		t.Errorf("a bad built-in schema validated a call: %v", err)
	}
}

// TOOL-1 (issue 30): sets built from the same built-in schema share one
// compiled Schema (a server builds a run's tools at every run), and a
// shared Schema still checks every call; another document gets its own.
func TestBuiltinSchemaShared_TOOL1(t *testing.T) {
	const doc = `{"type":"object","properties":{"shared":{"type":"integer"}},"required":["shared"]}`
	const other = `{"type":"object","properties":{"shared":{"type":"string"}}}`
	entry := func(schema string) *Entry {
		t.Helper()
		s, err := NewSet(OriginBuiltin, rawTool{schema})
		if err != nil {
			t.Fatal(err)
		}
		e, _ := s.Get("raw")
		return e
	}
	a, b, c := entry(doc), entry(doc), entry(other)
	if a.Schema != b.Schema {
		t.Error("two sets of the same built-in schema compiled it twice")
	}
	if a.Schema == c.Schema {
		t.Error("two different schemas share one Schema")
	}
	for _, e := range []*Entry{a, b} {
		if err := e.Schema.Validate(json.RawMessage(`{"shared":"x"}`)); err == nil {
			t.Error("a shared schema accepted a string for an integer")
		}
		if err := e.Schema.Validate(json.RawMessage(`{"shared":1}`)); err != nil {
			t.Errorf("a shared schema refused a valid call: %v", err)
		}
	}
	if err := c.Schema.Validate(json.RawMessage(`{"shared":"x"}`)); err != nil {
		t.Errorf("the other schema refused its valid call: %v", err)
	}
	// A schema from outside is shared too once it compiled; a bad one is
	// refused each time it is added.
	x, err := NewSet(OriginAgent, rawTool{doc})
	if err != nil {
		t.Fatal(err)
	}
	y, err := NewSet(OriginAgent, rawTool{doc})
	if err != nil {
		t.Fatal(err)
	}
	ex, _ := x.Get("raw")
	ey, _ := y.Get("raw")
	if ex.Schema != ey.Schema || ex.Schema.Validate(json.RawMessage(`{"shared":"x"}`)) == nil {
		t.Error("an agent's schema is compiled twice, or its shared copy accepts a wrong call")
	}
	const bad = `{"type":"object","properties":{"n":{"$ref":"#/$defs/gone"}}}`
	for range 2 {
		if _, err := NewSet(OriginMCP, rawTool{bad}); err == nil {
			t.Error("a bad schema was added")
		}
	}
}

// TOOL-1: schemas shared across sets are checked from many goroutines at
// once (the race detector watches).
func TestBuiltinSchemaSharedConcurrently_TOOL1(t *testing.T) {
	const doc = `{"type":"object","properties":{"conc":{"type":"integer","minimum":0}},"required":["conc"]}`
	done := make(chan error, 8)
	for i := range 8 {
		go func() {
			s, err := NewSet(OriginBuiltin, rawTool{doc})
			if err != nil {
				done <- err
				return
			}
			e, _ := s.Get("raw")
			in := fmt.Sprintf(`{"conc":%d}`, i-4)
			err = e.Schema.Validate(json.RawMessage(in))
			if (err == nil) != (i >= 4) {
				done <- fmt.Errorf("Validate(%s) = %v", in, err)
				return
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// A hostile MCP server that offers ever new schemas cannot grow the
// process's shared schemas without end: past maxSharedSchemas documents a
// schema is compiled for its own set only, and still checks calls (TOOL-1).
// Schemas are compiled with no loader, so one document means the same for
// every caller that shares it.
func TestSharedSchemasBounded_TOOL1(t *testing.T) {
	var added []string
	t.Cleanup(func() { // leave the process's cache as the other tests found it
		for _, k := range added {
			if _, ok := compiledSchemas.LoadAndDelete(k); ok {
				sharedSchemaCount.Add(-1)
			}
		}
	})
	for i := range maxSharedSchemas + 20 {
		doc := fmt.Sprintf(`{"type":"object","properties":{"n%d":{"type":"integer"}},"required":["n%d"]}`, i, i)
		added = append(added, doc)
		s, err := NewSet(OriginMCP, rawTool{doc})
		if err != nil {
			t.Fatal(err)
		}
		e, _ := s.Get("raw")
		if err := e.Schema.Validate(json.RawMessage(fmt.Sprintf(`{"n%d":"x"}`, i))); err == nil {
			t.Fatalf("schema %d accepted a string for an integer", i)
		}
	}
	if n := sharedSchemaCount.Load(); n > maxSharedSchemas {
		t.Errorf("%d schema documents kept for the process; want at most %d", n, maxSharedSchemas)
	}
}
