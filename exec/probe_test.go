package exec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeBwrap writes a bwrap stand-in that logs each start to a file and
// exits with status.
func fakeBwrap(t *testing.T, status string) (bin, log string) {
	t.Helper()
	dir := t.TempDir()
	bin, log = filepath.Join(dir, "bwrap"), filepath.Join(dir, "starts")
	script := "#!/bin/sh\necho x >> " + log + "\nexit " + status + "\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, log
}

func starts(t *testing.T, log string) int {
	t.Helper()
	b, err := os.ReadFile(log)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "x")
}

// CLI-1 (issue 30): a successful bubblewrap probe is remembered across
// processes, keyed by the binary and the kernel's state; a failure never
// is, and a planted or stale entry only makes rein probe again.
func TestProbeRemembered_CLI1(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh to stand in for bwrap")
	}
	bin, log := fakeBwrap(t, "0")
	cache := filepath.Join(t.TempDir(), "data", "bwrap-probe")
	newProcess := func() { probed.Delete(bin) } // what a new rein process starts with
	sb := &Sandbox{Bwrap: bin, ProbeCache: cache}
	t.Cleanup(newProcess)

	if err := sb.Available(); err != nil {
		t.Fatal(err)
	}
	if n := starts(t, log); n != 1 {
		t.Fatalf("bwrap started %d times, want 1", n)
	}
	if fi, err := os.Stat(cache); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("probe not remembered: %v %v", fi, err)
	}
	newProcess()
	if err := sb.Available(); err != nil {
		t.Fatal(err)
	}
	if n := starts(t, log); n != 1 {
		t.Fatalf("a remembered probe ran bwrap again (%d starts)", n)
	}

	// Another bwrap binary at the same path (new size and time): probed again.
	newProcess()
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho x >> "+log+"\n\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := sb.Available(); err != nil {
		t.Fatal(err)
	}
	if n := starts(t, log); n != 2 {
		t.Fatalf("a changed bwrap was not probed again (%d starts)", n)
	}

	// Attack rows: a planted entry that is not this key, or an empty one,
	// skips nothing.
	for _, planted := range []string{"0000", "", strings.Repeat("a", 64)} {
		newProcess()
		if err := os.WriteFile(cache, []byte(planted), 0o600); err != nil {
			t.Fatal(err)
		}
		before := starts(t, log)
		if err := sb.Available(); err != nil {
			t.Fatal(err)
		}
		if starts(t, log) != before+1 {
			t.Errorf("entry %q skipped the probe", planted)
		}
	}

	// A bwrap that cannot run: an error every time, nothing remembered.
	bad, badLog := fakeBwrap(t, "1")
	badCache := filepath.Join(t.TempDir(), "bwrap-probe")
	for range 2 {
		err := (&Sandbox{Bwrap: bad, ProbeCache: badCache}).Available()
		if !errors.Is(err, ErrNoSandbox) {
			t.Fatalf("failing bwrap: %v", err)
		}
	}
	if n := starts(t, badLog); n != 2 {
		t.Errorf("a failed probe was remembered (%d starts, want 2)", n)
	}
	if _, err := os.Stat(badCache); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed probe was written: %v", err)
	}
}

// The key changes with the bwrap binary and is empty for a missing one.
func TestProbeKey_CLI1(t *testing.T) {
	bin, _ := fakeBwrap(t, "0")
	k1 := probeKey(bin)
	if len(k1) != 64 || k1 != probeKey(bin) {
		t.Fatalf("key %q not stable", k1)
	}
	if probeKey(filepath.Join(t.TempDir(), "missing")) != "" {
		t.Error("a missing binary has a key")
	}
	other, _ := fakeBwrap(t, "0")
	if probeKey(other) == k1 {
		t.Error("two binaries share a key")
	}
}
