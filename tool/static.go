package tool

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/reinhq/rein/llm"
)

// StaticSchema is the input schema of a tool taking In whose schema does
// not depend on how the tool is made. The built-in tools keep theirs in
// package variables and pass them to [DefineStatic]; a package's
// generated file registers their encoded form ([RegisterSchemas]), so a
// run takes it as it is, and a schema without one is inferred from In
// (and adjusted by tune) once per process, at its first use. Inferring
// and encoding the built-in tools' schemas cost ~1 ms on the way to every
// run's first model request, and again for every conversation a process
// set up — each session a server opens, each /clear (issue 30, CLI-1).
type StaticSchema[In any] struct {
	raw func() json.RawMessage
}

var (
	staticMu  sync.Mutex
	declared  = map[string]func() json.RawMessage{} // type name → inference
	generated = map[string]string{}                 // type name → encoded schema
)

// typeName names In in the registries: its package path and name.
func typeName[In any]() string {
	t := reflect.TypeFor[In]()
	return t.PkgPath() + "." + t.Name()
}

// NewStaticSchema declares the input schema of tools taking In, adjusted
// by tune (see [Define]); tune must depend on nothing but the schema. Call
// it from a package variable's initialiser: it builds nothing until the
// schema is first needed. In must be a named type.
func NewStaticSchema[In any](tune func(*jsonschema.Schema)) StaticSchema[In] {
	name := typeName[In]()
	infer := func() json.RawMessage { return inferSchema[In](name, tune) }
	staticMu.Lock()
	declared[name] = infer
	staticMu.Unlock()
	return StaticSchema[In]{raw: sync.OnceValue(func() json.RawMessage {
		staticMu.Lock()
		g, ok := generated[name]
		staticMu.Unlock()
		if ok {
			return json.RawMessage(g)
		}
		return infer()
	})}
}

// RegisterSchemas registers encoded schemas by the name of their input
// type (package path and name): a package's generated file calls it from
// its init (see package tool/schemagen).
func RegisterSchemas(schemas map[string]string) {
	staticMu.Lock()
	defer staticMu.Unlock()
	for k, v := range schemas {
		generated[k] = v
	}
}

// DeclaredSchemas returns the schemas, inferred, of the static schemas
// declared for input types of package pkgPath, by type name: what the
// package's generated file must register (see package tool/schemagen).
func DeclaredSchemas(pkgPath string) map[string]json.RawMessage {
	staticMu.Lock()
	infers := map[string]func() json.RawMessage{}
	for name, infer := range declared {
		if reflectPkg(name) == pkgPath {
			infers[name] = infer
		}
	}
	staticMu.Unlock()
	out := make(map[string]json.RawMessage, len(infers))
	for name, infer := range infers {
		out[name] = infer()
	}
	return out
}

// reflectPkg is the package path of a registry name.
func reflectPkg(name string) string {
	return name[:max(strings.LastIndexByte(name, '.'), 0)]
}

// DefineStatic is [Define] with a schema declared by [NewStaticSchema].
func DefineStatic[In any](name, description string, meta Meta, schema StaticSchema[In],
	fn func(ctx context.Context, call Call, in In) (Result, error)) Tool {
	// A copy: the tool's spec is its own, whatever a caller does with it.
	raw := slices.Clone(schema.raw())
	return &typed[In]{spec: llm.ToolSpec{Name: name, Description: description, InputSchema: raw}, meta: meta, fn: fn}
}
