package kbtool_test

import (
	"flag"
	"testing"

	"github.com/reinhq/rein/tool/schemagen"
)

var update = flag.Bool("update", false, "rewrite schemas_gen.go from the inferred schemas")

// CLI-1 (issue 30): kbtool's generated input schemas are what its input
// types infer now; a run takes them as they are.
func TestSchemasGenerated_CLI1(t *testing.T) {
	schemagen.Check(t, "github.com/reinhq/rein/tool/kbtool", "kbtool", *update)
}
