package exec

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/exec/helper"
)

// buildHelperProgram builds cmd/rein-sandbox-helper into a directory of
// its own, as scripts/build puts it beside rein.
func buildHelperProgram(t *testing.T) string {
	t.Helper()
	if LandlockABI() < 1 {
		t.Skip("environment: no Landlock here, the helper refuses to run")
	}
	if _, err := osexec.LookPath("go"); err != nil {
		t.Skip("environment: no go toolchain to build rein-sandbox-helper")
	}
	out := filepath.Join(t.TempDir(), HelperProgram)
	c := osexec.Command("go", "build", "-o", out, "github.com/reinhq/rein/cmd/rein-sandbox-helper")
	if msg, err := c.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/rein-sandbox-helper: %v\n%s", err, msg)
	}
	return out
}

func fileSum(t *testing.T, p string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TOOL-5, issue 30: rein-sandbox-helper serves as the Landlock helper
// inside bubblewrap as rein does — the layer applies, the backend behaves
// as every backend must — and a command cannot change it, get around it by
// running it again, or make it forward.
func TestHelperProgram_TOOL5(t *testing.T) {
	h := buildHelperProgram(t)
	s, ws := newSandbox(t)
	s.Landlock = h
	out, err := s.Run(context.Background(), Command{Script: "touch /dev/rein-probe; echo x > ok && cat ok && echo y > /tmp/t && cat /tmp/t", Dir: ws, Timeout: guard})
	if err != nil || !strings.Contains(string(out.Combined), "Permission denied") || !strings.HasSuffix(string(out.Combined), "x\ny\n") {
		t.Fatalf("with rein-sandbox-helper: %q, %v", out.Combined, err)
	}
	testBackend(t, s, ws)

	before := fileSum(t, h)
	again := fmt.Sprintf("%s %s --protocol %s --rw / --rw /dev --", h, helper.Arg, helper.Protocol)
	// Each row exits 0 only when the attack worked.
	for _, a := range []struct{ name, script string }{
		{"overwrite the helper so the next command runs unrestricted", "cp /bin/sh " + h},
		{"truncate the helper", ": > " + h},
		{"remove the helper", "rm -f " + h + " && test ! -e " + h},
		{"replace the helper by renaming over it", "cp /bin/sh " + ws + "/h && mv -f " + ws + "/h " + h},
		{"make the helper writable", "chmod 0777 " + h},
		{"run the helper again granting / to undo the restriction", again + " touch /dev/rein-again"},
		{"run the helper again granting / to write outside", again + " sh -c 'echo x > /etc/rein-planted'"},
		{"run the helper with nothing to restrict", h + " " + helper.Arg + " --protocol " + helper.Protocol + " -- touch /dev/rein-bare"},
		{"make the helper forward to a socket of the command's choosing", h + " " + helper.Arg + " --protocol " + helper.Protocol +
			" --egress " + ws + "/s --proxy --rw / -- touch /dev/rein-fwd"},
	} {
		t.Run(a.name, func(t *testing.T) {
			out, err := s.Run(context.Background(), Command{Script: a.script, Dir: ws, Timeout: guard})
			if err != nil {
				t.Fatal(err)
			}
			if out.ExitCode == 0 {
				t.Errorf("the attack worked: %q", out.Combined)
			}
		})
	}
	if fileSum(t, h) != before {
		t.Fatal("a command changed rein-sandbox-helper")
	}
	if _, err := os.Stat("/etc/rein-planted"); err == nil {
		os.Remove("/etc/rein-planted")
		t.Fatal("a command wrote to the host's /etc")
	}

	// A server's confined sandbox (API-9) shows the helper, read-only,
	// and nothing else of its directory.
	f := newReadConfined(t)
	f.s.Landlock = h
	out, err = f.s.Run(context.Background(), Command{Dir: f.ws, Timeout: guard,
		Script: "touch /dev/rein-probe; ls " + filepath.Dir(h) + "; grep -rqs " + confinedSecret + " " + f.data + " && echo LEAK; echo x > ok && cat ok"})
	if err != nil || !strings.Contains(string(out.Combined), "Permission denied") || strings.Contains(string(out.Combined), "LEAK") ||
		strings.TrimSpace(string(out.Combined)) == "" || !strings.HasSuffix(string(out.Combined), HelperProgram+"\nx\n") {
		t.Fatalf("confined, with rein-sandbox-helper: %q, %v", out.Combined, err)
	}
}

// TOOL-5: a rein-sandbox-helper built from other sources than the rein
// that runs it (another Protocol) refuses to run the command, saying how
// to fix it, and so does one asked to forward, which only rein can.
func TestHelperProgramRefuses_TOOL5(t *testing.T) {
	h := buildHelperProgram(t)
	ws := t.TempDir()
	ran := filepath.Join(ws, "ran")
	for _, row := range []struct {
		name string
		args []string
		want string
	}{
		{"an older rein (no protocol)", []string{"--rw", ws}, "rebuild rein-sandbox-helper"},
		{"another protocol", []string{"--protocol", helper.Protocol + "0", "--rw", ws}, "rebuild rein-sandbox-helper"},
		{"forwards", []string{"--protocol", helper.Protocol, "--egress", ws + "/s", "--proxy", "--rw", ws}, "cannot forward"},
	} {
		t.Run(row.name, func(t *testing.T) {
			args := append([]string{helper.Arg}, row.args...)
			args = append(args, "--", "sh", "-c", "touch "+ran)
			msg, err := osexec.Command(h, args...).CombinedOutput()
			if ee, ok := err.(*osexec.ExitError); !ok || ee.ExitCode() != 126 || !strings.Contains(string(msg), row.want) {
				t.Errorf("%v: %s", err, msg)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Error("the command ran")
			}
		})
	}
	msg, err := osexec.Command(h).CombinedOutput()
	if ee, ok := err.(*osexec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(msg), "not a user command") {
		t.Errorf("run by hand: %v: %s", err, msg)
	}
}

// TOOL-7: with a network allow-list the forwarder is rein itself, never
// rein-sandbox-helper (which cannot forward), and Landlock still applies.
func TestHelperProgramEgress_TOOL7(t *testing.T) {
	needTool(t, "curl")
	h := buildHelperProgram(t)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = fmt.Fprint(w, "plain-ok") }))
	t.Cleanup(plain.Close)
	ws := t.TempDir()
	s := defaultSandbox(t, ws, "registry.test")
	s.Landlock = h
	if f := s.forwarder(); f == "" || f == h {
		t.Fatalf("forwarder %q", f)
	}
	s.Egress.Lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("203.0.113.7")}, nil
	}
	s.Egress.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, strings.TrimPrefix(plain.URL, "http://"))
	}
	out := runOK(t, s, Command{Dir: ws, Script: "curl -fsS http://registry.test/ && { touch /dev/rein-probe; true; }"})
	if !bytes.Contains(out.Combined, []byte("plain-ok")) || !bytes.Contains(out.Combined, []byte("Permission denied")) {
		t.Fatalf("output %q", out.Combined)
	}
}

// TOOL-5: rein-sandbox-helper beside the executable is used only when no
// one but its owner (root or this user) could have put it there or
// changed it; otherwise rein serves as the helper itself.
func TestCompanionOf_TOOL5(t *testing.T) {
	type layout struct {
		dirMode, fileMode os.FileMode
		link, dir, none   bool
		chown             bool
	}
	for _, row := range []struct {
		name string
		l    layout
		use  bool
	}{
		{"installed beside rein", layout{dirMode: 0o755, fileMode: 0o755}, true},
		{"owner-only", layout{dirMode: 0o700, fileMode: 0o700}, true},
		{"absent", layout{dirMode: 0o755, none: true}, false},
		{"group-writable file", layout{dirMode: 0o755, fileMode: 0o775}, false},
		{"world-writable file", layout{dirMode: 0o755, fileMode: 0o757}, false},
		{"not executable", layout{dirMode: 0o755, fileMode: 0o644}, false},
		{"a link to a helper elsewhere", layout{dirMode: 0o755, fileMode: 0o755, link: true}, false},
		{"a directory of that name", layout{dirMode: 0o755, dir: true}, false},
		{"world-writable directory (anyone could plant one)", layout{dirMode: 0o777, fileMode: 0o755}, false},
		{"sticky world-writable directory", layout{dirMode: 0o777 | os.ModeSticky, fileMode: 0o755}, false},
		{"group-writable directory", layout{dirMode: 0o775, fileMode: 0o755}, false},
		{"owned by another user", layout{dirMode: 0o755, fileMode: 0o755, chown: true}, false},
	} {
		t.Run(row.name, func(t *testing.T) {
			if row.l.chown && os.Getuid() != 0 {
				t.Skip("environment: only root can give a file to another user")
			}
			dir := filepath.Join(t.TempDir(), "bin")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			exe := filepath.Join(dir, "rein")
			if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, HelperProgram)
			switch {
			case row.l.none:
			case row.l.dir:
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
			case row.l.link:
				elsewhere := filepath.Join(t.TempDir(), HelperProgram)
				if err := os.WriteFile(elsewhere, []byte("#!/bin/sh\n"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(elsewhere, p); err != nil {
					t.Fatal(err)
				}
			default:
				if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(p, row.l.fileMode); err != nil {
					t.Fatal(err)
				}
				if row.l.chown {
					if err := os.Chown(p, 65534, 65534); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := os.Chmod(dir, row.l.dirMode); err != nil {
				t.Fatal(err)
			}
			got := companionOf(exe)
			if (got != "") != row.use || (row.use && got != p) {
				t.Errorf("companionOf = %q, want used: %v", got, row.use)
			}
		})
	}
	if companionOf("") != "" {
		t.Error("no executable, yet a companion")
	}
}
