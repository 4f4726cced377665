package helper

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// TOOL-7: the helper's options round-trip: what Argv writes, Parse reads
// back.
func TestArgvParse_TOOL7(t *testing.T) {
	r := Rules{Dirs: []string{"/w"}, Files: []string{"/dev/null"}, NoTCP: true}
	f := Forward{Socket: "/tmp/.rein-egress.sock", Proxy: true, Mirrors: []string{"127.0.0.1:4873", "localhost:3000"}}
	argv := Argv("/rein", r, f, []string{"bash", "-c", "x"})
	if argv[0] != "/rein" || argv[1] != Arg {
		t.Fatalf("argv %q", argv)
	}
	gotR, gotF, inner, err := Parse(argv[2:])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(inner, " ") != "bash -c x" || gotF.Socket != f.Socket || !gotF.Proxy || len(gotF.Mirrors) != 2 ||
		len(gotR.Dirs) != 1 || len(gotR.Files) != 1 || !gotR.NoTCP {
		t.Fatalf("%+v %+v %q", gotR, gotF, inner)
	}
}

// The helper refuses a malformed command line without running anything:
// attack rows are arguments a confused or hostile caller might pass.
func TestParseRefuses_TOOL5(t *testing.T) {
	for _, bad := range [][]string{
		{"--rw"}, {"--"}, {"--what", "--", "x"}, {"--rw", "/w"},
		{"--", "bash"},                  // nothing to do: would run unrestricted
		{"--egress"}, {"--mirror", "x"}, // a value missing
		{"--bogus", "--", "x"},        // unknown option
		{"--proxy", "--egress", "/s"}, // no command
		{"--no-tcp", "--", "sh"},      // no directory: Landlock would deny every write, and says nothing is granted
		{"--egress", "/s", "--", "x"}, // a socket with nothing to forward
		{"--rw", "/w", "--rw-file"},   // a value missing at the end
	} {
		bad = append([]string{"--protocol", Protocol}, bad...)
		if _, _, _, err := Parse(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
	// A helper from other sources (an old rein-sandbox-helper beside a new
	// rein, or the reverse) refuses, saying how to fix it.
	for _, stale := range [][]string{
		{"--rw", "/w", "--", "x"},                    // before protocols
		{"--protocol", "0", "--rw", "/w", "--", "x"}, // another version
		{"--protocol", Protocol + "x", "--rw", "/w", "--", "x"},
		{"--protocol"},
		{"--rw", "/w", "--protocol", Protocol, "--", "x"}, // not first
	} {
		_, _, _, err := Parse(stale)
		if err == nil || !strings.Contains(err.Error(), "rebuild rein-sandbox-helper") {
			t.Errorf("%q: %v", stale, err)
		}
	}
}

// TOOL-5: Protocol pins the helper's sources. A rein-sandbox-helper built
// from other sources than rein must refuse rein's command line, so every
// change to what the helper does bumps Protocol; this test fails on any
// change to the sources until the pin below is updated with it.
func TestProtocolPinsSources_TOOL5(t *testing.T) {
	const pinned = "3d3622b792b61f2edf04aebd1ca9af6b3f3095cecf1025dfb02d24260d2c0161"
	h := sha256.New()
	for _, f := range []string{"helper.go", "landlock_linux.go", "landlock_other.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != pinned {
		t.Fatalf("exec/helper's sources changed (Protocol %q): if what the helper does changed, bump Protocol; then pin %s", Protocol, got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("--protocol\x00" + Protocol + "\x00--rw\x00/w\x00--\x00bash")
	f.Add("--protocol\x00" + Protocol + "\x00--egress\x00/s\x00--proxy\x00--mirror\x00127.0.0.1:1\x00--\x00x")
	f.Add("--rw\x00/w\x00--\x00bash")
	f.Fuzz(func(t *testing.T, s string) {
		r, fw, argv, err := Parse(strings.Split(s, "\x00"))
		if err != nil {
			return
		}
		if len(argv) == 0 || (len(r.Dirs) == 0 && !fw.Active()) {
			t.Fatalf("%q: accepted with nothing to do: %+v %+v %q", s, r, fw, argv)
		}
		again := Argv("x", r, fw, argv)
		r2, fw2, argv2, err := Parse(again[2:])
		if err != nil || len(r2.Dirs) != len(r.Dirs) || fw2.Active() != fw.Active() || strings.Join(argv2, "\x00") != strings.Join(argv, "\x00") {
			t.Fatalf("%q: Argv then Parse: %+v %+v %q %v", s, r2, fw2, argv2, err)
		}
	})
}
