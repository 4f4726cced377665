package main

import (
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"testing"
)

// initBudget is what one of rein's own packages may allocate in its init,
// and initTotal what all of them may: every rein process pays it before
// main (issue 30, CLI-1). Regular expressions, schemas and tables a run may
// never use are built at their first use (sync.OnceValue), not at init.
const (
	initBudget = 32 << 10
	initTotal  = 256 << 10
)

// CLI-1 (issue 30): rein's own package inits build nothing big. Before,
// they compiled ~35 regular expressions at every start (720 kB, ~1 ms);
// this fails, naming the package, when one comes back.
func TestInitsStaySmall_CLI1(t *testing.T) {
	bin := reinBinary(t)
	c := osexec.Command(bin, "--version")
	c.Env = append(os.Environ(), "GODEBUG=inittrace=1", "HOME="+t.TempDir())
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	total, seen := 0, 0
	for line := range strings.Lines(string(out)) {
		// init github.com/reinhq/rein/workspace @10 ms, 0.25 ms clock, 167680 bytes, 2078 allocs
		f := strings.Fields(line)
		if len(f) < 9 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/reinhq/rein/") || f[8] != "bytes," {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("cannot read %q: %v", line, err)
		}
		seen++
		total += n
		if n > initBudget {
			t.Errorf("%s allocates %d bytes at init (budget %d): build it at first use (sync.OnceValue)", f[1], n, initBudget)
		}
	}
	if seen < 10 {
		t.Fatalf("only %d of rein's packages in the init trace (GODEBUG=inittrace=1 ignored?):\n%s", seen, out)
	}
	if total > initTotal {
		t.Errorf("rein's packages allocate %d bytes at init (budget %d)", total, initTotal)
	}
}
