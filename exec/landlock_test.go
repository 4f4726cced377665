//go:build linux

package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newConfined returns a Landlock backend over a fresh workspace, or skips
// the test when the kernel has no Landlock.
func newConfined(t *testing.T) (*Confined, string) {
	t.Helper()
	if LandlockABI() < 1 {
		t.Skipf("environment: no Landlock here, Landlock tests skipped")
	}
	ws := t.TempDir()
	return &Confined{Workspace: ws, Local: Local{PipeGrace: 100 * time.Millisecond}}, ws
}

func TestConfinedConformance(t *testing.T) {
	c, ws := newConfined(t)
	testBackend(t, c, ws)
}

// TOOL-5: under Landlock alone, a command writes the workspace and its
// private TMPDIR only, cannot reach TCP, and cannot read rein's memory
// through /proc nor signal it — as root too. (Landlock lets /proc/PID/environ
// and maps be read: rein overwrites its environment block at start-up.)
func TestConfinedRestricts_TOOL5(t *testing.T) {
	c, ws := newConfined(t)
	outside := t.TempDir()
	tests := []struct {
		name, script string
		ok           bool
	}{
		{"write workspace", "echo hi > made && mkdir -p d && echo x > d/f", true},
		{"private tmp", `echo x > "$TMPDIR/x" && cat "$TMPDIR/x"`, true},
		{"write outside", "echo x > " + filepath.Join(outside, "f"), false},
		{"write /tmp", "echo x > /tmp/rein-landlock-test-" + fmt.Sprint(os.Getpid()), false},
		{"write /etc", "touch /etc/rein-landlock-test", false},
		{"dev null", "echo x > /dev/null", true},
		{"read rein's memory", `a=$(head -1 /proc/$PPID/maps | cut -d- -f1); dd if=/proc/$PPID/mem bs=1 count=1 skip=$((16#$a)) status=none | wc -c | grep -qx 1`, false},
		{"read the system", "grep -q NAME= /etc/os-release", true},
	}
	if LandlockABI() >= 6 {
		tests = append(tests, struct {
			name, script string
			ok           bool
		}{"signal rein", "kill -0 $PPID", false})
	}
	for _, tt := range tests {
		out, err := c.Run(context.Background(), Command{Script: tt.script, Dir: ws, Timeout: guard})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if ok := out.ExitCode == 0; ok != tt.ok {
			t.Errorf("%s: exit %d, output %q; want success=%v", tt.name, out.ExitCode, out.Combined, tt.ok)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); err == nil {
		t.Error("wrote outside the workspace")
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "made")); string(data) != "hi\n" {
		t.Errorf("workspace write not on the host: %q", data)
	}
	// The restriction stayed with the command: rein's own threads, and the
	// commands they start unconfined, still write anywhere.
	for i := range 20 {
		p := filepath.Join(outside, fmt.Sprint(i))
		if out, err := (&Local{}).Run(context.Background(), Command{Script: "echo x > " + p, Timeout: guard}); err != nil || out.ExitCode != 0 {
			t.Fatalf("an unconfined command was confined: %q, %v", out.Combined, err)
		}
		if err := os.WriteFile(p+"-direct", nil, 0o644); err != nil {
			t.Fatalf("rein itself was confined: %v", err)
		}
	}
}

// TOOL-5: under Landlock alone, TCP is cut unless AllowNetwork (ABI 4).
func TestConfinedNetwork_TOOL5(t *testing.T) {
	c, ws := newConfined(t)
	if LandlockABI() < 4 {
		t.Skip("environment: Landlock ABI < 4 has no network rules")
	}
	script, accepted := tcpProbe(t)
	out, err := c.Run(context.Background(), Command{Script: script, Dir: ws, Timeout: guard})
	if err != nil || out.ExitCode == 0 || accepted.Load() != 0 {
		t.Fatalf("reached the listener: %+v, %v", out, err)
	}
	open := *c
	open.AllowNetwork = true
	if out, err := open.Run(context.Background(), Command{Script: script, Dir: ws, Timeout: guard}); err != nil || out.ExitCode != 0 {
		t.Fatalf("with AllowNetwork: %+v, %v", out, err)
	}
}

// TOOL-5, PERM-5: under Landlock alone a new repository's hooks are still
// moved aside after the command.
func TestConfinedQuarantine_TOOL5(t *testing.T) {
	c, ws := newConfined(t)
	out, err := c.Run(context.Background(), Command{Script: "mkdir -p n/.git/hooks n/.git/objects n/.git/refs && echo ref > n/.git/HEAD && echo x > n/.git/hooks/pre-commit",
		Dir: ws, Timeout: guard})
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("%+v, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "n/.git/hooks"+QuarantineSuffix)); err != nil || len(out.Notes) != 1 {
		t.Fatalf("hooks not moved aside: %v, %q", err, out.Notes)
	}
}

// TOOL-5: inside bubblewrap, the Landlock layer applies too: /dev, which
// bubblewrap leaves writable, is not.
func TestSandboxLandlockLayer_TOOL5(t *testing.T) {
	s, ws := newSandbox(t)
	hexe := SelfHelper()
	if hexe == "" {
		t.Skip("environment: no Landlock here")
	}
	script := "touch /dev/rein-probe"
	out, err := s.Run(context.Background(), Command{Script: script, Dir: ws, Timeout: guard})
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("without Landlock: %+v, %v", out, err)
	}
	s.Landlock = hexe
	out, err = s.Run(context.Background(), Command{Script: script + "; echo x > ok && cat ok && echo y > /tmp/t && cat /tmp/t", Dir: ws, Timeout: guard})
	if err != nil || !strings.Contains(string(out.Combined), "Permission denied") || !strings.HasSuffix(string(out.Combined), "x\ny\n") {
		t.Fatalf("with Landlock: %q, %v", out.Combined, err)
	}
	testBackend(t, s, ws)
}
