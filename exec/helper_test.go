package exec

import (
	"strings"
	"testing"
)

// TOOL-7: the helper's options round-trip: what helperArgv writes,
// parseHelper reads back.
func TestHelperForwardArgs_TOOL7(t *testing.T) {
	r := landlockRules{dirs: []string{"/w"}, files: []string{"/dev/null"}}
	f := forwardSpec{socket: egressSocket, proxy: true, mirrors: []string{"127.0.0.1:4873", "localhost:3000"}}
	argv := helperArgv("/rein", r, f, []string{"bash", "-c", "x"})
	gotR, gotF, inner, err := parseHelper(argv[2:])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(inner, " ") != "bash -c x" || gotF.socket != f.socket || !gotF.proxy || len(gotF.mirrors) != 2 || len(gotR.dirs) != 1 {
		t.Fatalf("%+v %+v %q", gotR, gotF, inner)
	}
	for _, bad := range [][]string{{"--", "bash"}, {"--egress"}, {"--mirror", "x"}, {"--bogus", "--", "x"}, {"--proxy", "--egress", "/s"}} {
		if _, _, _, err := parseHelper(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func FuzzParseHelper(f *testing.F) {
	f.Add("--rw\x00/w\x00--\x00bash")
	f.Add("--egress\x00/s\x00--proxy\x00--mirror\x00127.0.0.1:1\x00--\x00x")
	f.Fuzz(func(t *testing.T, s string) {
		r, fw, argv, err := parseHelper(strings.Split(s, "\x00"))
		if err != nil {
			return
		}
		if len(argv) == 0 || (len(r.dirs) == 0 && !fw.active()) {
			t.Fatalf("%q: accepted with nothing to do: %+v %+v %q", s, r, fw, argv)
		}
	})
}
