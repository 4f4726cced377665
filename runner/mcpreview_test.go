package runner_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/tool/mcptool"
)

// flaggedScreening is a screening of the server with one finding in the
// tool read's description, of that hash.
func flaggedScreening(hash string) mcptool.Screening {
	return mcptool.Screening{Hash: hash, Findings: []mcptool.Finding{
		{Tool: "read", Where: "description", Rule: "injection: tells the model to ignore or override its instructions"}}}
}

// MCP-2: acceptances are kept by server and hash in the user's directory:
// another hash or server is not accepted, a new acceptance replaces the
// server's old one, revoking forgets it, and the file is private.
func TestMCPReviewsAccept_MCP2(t *testing.T) {
	dir := t.TempDir()
	r := &runner.MCPReviews{Dir: dir}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s1, s2 := flaggedScreening("h1"), flaggedScreening("h2")
	if r.Accepted("evil", s1.Hash) {
		t.Fatal("accepted before anything was recorded")
	}
	if err := r.Accept("evil", mcptool.Screening{}, now); err == nil || !strings.Contains(err.Error(), "nothing flagged") {
		t.Errorf("accepting an unflagged screening: %v", err)
	}
	if err := r.Accept("evil", s1, now); err != nil {
		t.Fatal(err)
	}
	if !r.Accepted("evil", s1.Hash) || r.Accepted("evil", s2.Hash) || r.Accepted("other", s1.Hash) || r.Accepted("evil", "") {
		t.Error("acceptance is not by server and hash")
	}
	if err := r.Accept("evil", s2, now); err != nil {
		t.Fatal(err)
	}
	if r.Accepted("evil", s1.Hash) || !r.Accepted("evil", s2.Hash) {
		t.Error("a new acceptance did not replace the old one")
	}
	list, err := r.Acceptances()
	if err != nil || len(list) != 1 || list[0].Server != "evil" || !list[0].At.Equal(now) || len(list[0].Findings) == 0 {
		t.Errorf("acceptances = %+v, %v", list, err)
	}
	fi, err := os.Stat(filepath.Join(dir, "mcp-accepted.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file: %v, %v", fi, err)
	}
	if had, err := r.Revoke("evil"); !had || err != nil {
		t.Errorf("revoke = %v, %v", had, err)
	}
	if r.Accepted("evil", s2.Hash) {
		t.Error("accepted after revoke")
	}
	if had, _ := r.Revoke("evil"); had {
		t.Error("a second revoke found something")
	}
}

// MCP-2: a damaged or foreign acceptance file accepts nothing and says how
// to recover; an empty directory keeps nothing and says why.
func TestMCPReviewsDamaged_MCP2(t *testing.T) {
	s := flaggedScreening("h1")
	for name, content := range map[string]string{
		"not JSON":      "{{{",
		"other version": `{"version": 2, "entries": [{"server": "evil", "hash": "` + s.Hash + `"}]}`,
		"too large":     `{"version": 1, "entries": [` + strings.Repeat(" ", 4<<20) + `]}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "mcp-accepted.json"), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			r := &runner.MCPReviews{Dir: dir}
			if r.Accepted("evil", s.Hash) {
				t.Error("a damaged file accepted a server")
			}
			err := r.Accept("evil", s, time.Now())
			if err == nil || !strings.Contains(err.Error(), "mcp-accepted.json") {
				t.Errorf("accept over a damaged file: %v", err)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "mcp-accepted.json")); string(got) != content {
				t.Error("the damaged file was overwritten")
			}
		})
	}
	if err := (&runner.MCPReviews{}).Accept("evil", s, time.Now()); err == nil || !strings.Contains(err.Error(), "REIN_CONFIG_DIR") {
		t.Errorf("accept without a directory: %v", err)
	}
}

// MCP-2: the note of withheld servers keeps the last screening of each,
// and forgets a server once it is no longer flagged.
func TestMCPReviewsFlagged_MCP2(t *testing.T) {
	r := &runner.MCPReviews{Dir: t.TempDir()}
	s := flaggedScreening("h1")
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	if err := r.RecordFlagged("evil", s, now); err != nil {
		t.Fatal(err)
	}
	f, ok := r.LastFlagged("evil")
	if !ok || f.Hash != s.Hash || !f.At.Equal(now) || len(f.Findings) != len(s.Findings) {
		t.Errorf("last flagged = %+v, %v", f, ok)
	}
	if err := r.RecordFlagged("evil", mcptool.Screening{}, now); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.LastFlagged("evil"); ok {
		t.Error("an unflagged screening kept the note")
	}
}

// FuzzMCPReviewsFile: any content of the acceptance file is read without
// panicking; what it accepts is exactly what it lists, and Accept over a
// file it cannot read leaves the file as it was.
func FuzzMCPReviewsFile(f *testing.F) {
	f.Add([]byte(`{"version": 1, "entries": [{"server": "evil", "hash": "h"}]}`))
	f.Add([]byte(`{"version": 1, "entries": null}`))
	f.Add([]byte(`{"version": 1}{"version": 2}`))
	f.Add([]byte("\xff\x00"))
	s := flaggedScreening("h1")
	f.Fuzz(func(t *testing.T, content []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "mcp-accepted.json")
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		r := &runner.MCPReviews{Dir: dir}
		list, err := r.Acceptances()
		listed := err == nil && slices.ContainsFunc(list, func(a runner.MCPAcceptance) bool { return a.Server == "evil" && a.Hash == "h" })
		if r.Accepted("evil", "h") != listed {
			t.Fatalf("Accepted disagrees with the list %v (err %v)", list, err)
		}
		if err := r.Accept("evil", s, time.Now()); err != nil {
			if got, _ := os.ReadFile(path); string(got) != string(content) {
				t.Fatal("a failed Accept changed the file")
			}
		} else if !r.Accepted("evil", s.Hash) {
			t.Fatal("Accept succeeded but the server is not accepted")
		}
	})
}
