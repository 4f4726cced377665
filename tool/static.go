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
	s *static
}

// static is a declared schema: one allocation at init.
type static struct {
	name  string // the input type's package path and name
	tune  func(*jsonschema.Schema)
	infer func(string, func(*jsonschema.Schema)) json.RawMessage // inferSchema[In]
	once  sync.Once
	raw   json.RawMessage
}

// get returns the schema: the generated one, else the inferred one.
func (s *static) get() json.RawMessage {
	s.once.Do(func() {
		staticMu.Lock()
		g, ok := generated[s.name]
		staticMu.Unlock()
		if ok {
			s.raw = json.RawMessage(g)
			return
		}
		s.raw = s.infer(s.name, s.tune)
	})
	return s.raw
}

var (
	staticMu  sync.Mutex
	declared  []*static             // every declaration
	generated = map[string]string{} // type name → encoded schema
)

// NewStaticSchema declares the input schema of tools taking In, adjusted
// by tune (see [Define]); tune must depend on nothing but the schema. Call
// it from a package variable's initialiser: it builds nothing until the
// schema is first needed. In must be a named type.
func NewStaticSchema[In any](tune func(*jsonschema.Schema)) StaticSchema[In] {
	t := reflect.TypeFor[In]()
	s := &static{name: t.PkgPath() + "." + t.Name(), tune: tune, infer: inferSchema[In]}
	staticMu.Lock()
	declared = append(declared, s)
	staticMu.Unlock()
	return StaticSchema[In]{s: s}
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
	var ours []*static
	for _, d := range declared {
		if reflectPkg(d.name) == pkgPath {
			ours = append(ours, d)
		}
	}
	staticMu.Unlock()
	out := make(map[string]json.RawMessage, len(ours))
	for _, d := range ours {
		out[d.name] = d.infer(d.name, d.tune)
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
	raw := slices.Clone(schema.s.get())
	return &typed[In]{spec: llm.ToolSpec{Name: name, Description: description, InputSchema: raw}, meta: meta, fn: fn}
}
