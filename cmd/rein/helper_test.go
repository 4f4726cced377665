package main

import (
	"os"
	osexec "os/exec"
	"strings"
	"testing"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/exec/helper"
)

// TOOL-5, issue 30: rein serves the sandbox's Landlock helper before the
// rest of the binary is initialised — none of rein's own front-end, server
// or store packages, nor the libraries they pull in, run their inits — and
// the command runs under the restriction. A helper run as a forwarder
// (network allow-list) is served later, by main.
func TestHelperRunsBeforeInits_TOOL5(t *testing.T) {
	if exec.LandlockABI() < 1 {
		t.Skip("environment: no Landlock here, the helper refuses to run")
	}
	bin := reinBinary(t)
	ws := t.TempDir()
	outside := t.TempDir()
	c := osexec.Command(bin, exec.HelperArg, "--protocol", helper.Protocol, "--rw", ws, "--", "sh", "-c", "echo ok > "+ws+"/f && cat "+ws+"/f; echo x > "+outside+"/g || echo denied")
	c.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	text := string(out)
	if !strings.Contains(text, "ok\n") || !strings.Contains(text, "denied") {
		t.Fatalf("the command did not run under the restriction:\n%s", text)
	}
	if !strings.Contains(text, "init os @") {
		t.Fatalf("no init trace (GODEBUG=inittrace=1 ignored?):\n%s", text)
	}
	for _, late := range []string{"github.com/reinhq/rein/cli ", "github.com/reinhq/rein/server ", "github.com/reinhq/rein/exec ",
		"net/http ", "github.com/danielgtaylor/huma/v2 ", "github.com/prometheus/client_golang/prometheus ", "modernc.org/sqlite "} {
		if strings.Contains(text, "init "+late) {
			t.Errorf("package %s was initialised before the helper ran", strings.TrimSpace(late))
		}
	}
	// Bad arguments: the command is not run, and rein says why.
	bad := osexec.Command(bin, exec.HelperArg, "--protocol", helper.Protocol, "--", "sh", "-c", "echo ran")
	out, err = bad.CombinedOutput()
	if ee, ok := err.(*osexec.ExitError); !ok || ee.ExitCode() != 126 || strings.Contains(string(out), "ran") ||
		!strings.Contains(string(out), "nothing to do") {
		t.Errorf("helper with nothing to do: %v\n%s", err, out)
	}
}
