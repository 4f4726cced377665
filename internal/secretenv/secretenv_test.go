package secretenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

const secret = "sk-test-SECRET-7f3a9c"

// TestMain runs the scrubbing helper when the test binary is re-executed
// for it: Scrub, then report what a child and /proc show.
func TestMain(m *testing.M) {
	if os.Getenv("REIN_TEST_SCRUB_HELPER") == "1" {
		helper()
		return
	}
	os.Exit(m.Run())
}

type helperResult struct {
	Report        Report
	Err           string
	Snapshot      string // the snapshot's ANTHROPIC_API_KEY
	ChildEnv      string // env, as a child sees it
	ProcEnviron   string // cat /proc/PID/environ from a child
	OwnEnviron    string // /proc/self/environ read by the process itself
	NonDumpable   bool
	AsNobody      string // cat /proc/PID/environ run as nobody, when root
	AsNobodyError bool
}

func helper() {
	snap, rep, err := Scrub()
	r := helperResult{Report: rep, Snapshot: snap.Getenv("ANTHROPIC_API_KEY"), NonDumpable: nonDumpable()}
	if err != nil {
		r.Err = err.Error()
	}
	out, _ := exec.Command("env").Output()
	r.ChildEnv = string(out)
	out, _ = exec.Command("cat", fmt.Sprintf("/proc/%d/environ", os.Getpid())).Output()
	r.ProcEnviron = string(out)
	own, _ := os.ReadFile("/proc/self/environ")
	r.OwnEnviron = string(own)
	if os.Getuid() == 0 {
		c := exec.Command("cat", fmt.Sprintf("/proc/%d/environ", os.Getpid()))
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := c.CombinedOutput()
		r.AsNobody, r.AsNobodyError = string(out), err != nil
	}
	json.NewEncoder(os.Stdout).Encode(r)
}

// PERM-5: after Scrub, the key is in rein's snapshot only: not in the
// environment children inherit, not in /proc/PID/environ (all of which is
// overwritten), and the process is non-dumpable.
func TestScrub_PERM5(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the environment block and dumpable flag are Linux's")
	}
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = []string{"REIN_TEST_SCRUB_HELPER=1", "PATH=" + os.Getenv("PATH"), "HOME=/nowhere",
		"ANTHROPIC_API_KEY=" + secret, "MY_SERVICE_TOKEN=" + secret + "2", "DB_PASSWORD=" + secret + "3", "LANG=C.UTF-8"}
	out, err := c.Output()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	var r helperResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("helper output %q: %v", out, err)
	}
	if r.Err != "" {
		t.Fatalf("Scrub: %s", r.Err)
	}
	if r.Snapshot != secret {
		t.Errorf("snapshot lost the key: %q", r.Snapshot)
	}
	if strings.Contains(string(out[bytes.Index(out, []byte(`"ChildEnv"`)):]), "SECRET") {
		t.Errorf("the secret is still reachable: %s", out)
	}
	if !strings.Contains(r.ChildEnv, "LANG=C.UTF-8") || !strings.Contains(r.ChildEnv, "HOME=/nowhere") {
		t.Errorf("children lost the ordinary variables: %q", r.ChildEnv)
	}
	if strings.Trim(r.ProcEnviron, "\x00") != "" || strings.Trim(r.OwnEnviron, "\x00") != "" {
		t.Errorf("/proc/PID/environ still shows %q", r.ProcEnviron)
	}
	if !r.NonDumpable || !r.Report.NonDumpable || r.Report.Overwritten == 0 || len(r.Report.Removed) != 3 {
		t.Errorf("report %+v, non-dumpable %v", r.Report, r.NonDumpable)
	}
	if os.Getuid() == 0 && !r.AsNobodyError {
		t.Errorf("another user read /proc/PID/environ: %q", r.AsNobody)
	}
}

func TestIsSecret(t *testing.T) {
	for name, want := range map[string]bool{
		"ANTHROPIC_API_KEY": true, "OPENAI_API_KEY": true, "GEMINI_API_KEY": true, "GOOGLE_API_KEY": true,
		"ANTHROPIC_AUTH_TOKEN": true, "GITHUB_TOKEN": true, "AWS_SECRET_ACCESS_KEY": true, "PGPASSWORD": true,
		"my_client_secret": true, "AZURE_DEVOPS_PAT": true, "STRIPE_APIKEY": true, "SSH_KEY": true,
		"PATH": false, "HOME": false, "ANTHROPIC_BASE_URL": false, "GIT_AUTHOR_NAME": false, "KEYBOARD": false,
		"REIN_SANDBOX": false, "TOKENIZERS_PARALLELISM": false,
	} {
		if got := IsSecret(name); got != want {
			t.Errorf("IsSecret(%s) = %v", name, got)
		}
	}
}
