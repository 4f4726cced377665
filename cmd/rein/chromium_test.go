package main

import (
	"bytes"
	"context"
	"os/exec"
	"testing"
	"time"
)

// chromiumCommand runs url in headless Chromium with a fresh profile in
// userDir, no background traffic, and the given host-resolver rules (so a
// test decides what every name resolves to: nothing leaves 127.0.0.1).
func chromiumCommand(ctx context.Context, chromium, userDir, rules, url string) *exec.Cmd {
	return exec.CommandContext(ctx, chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
		"--disable-background-networking", "--disable-component-update", "--no-proxy-server",
		"--host-resolver-rules="+rules, "--user-data-dir="+userDir, url)
}

// browse opens url in headless Chromium and returns the first report its
// page sends on reports. It fails the test when Chromium exits first or
// nothing comes within guard; stuck, when not nil, adds what the caller
// knows to that failure. Chromium is stopped before browse returns.
func browse[T any](t *testing.T, chromium, rules, url string, reports <-chan T, stuck func() string) T {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := chromiumCommand(ctx, chromium, t.TempDir(), rules, url)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cancel()
		<-exited
	}()
	var rep T
	select {
	case rep = <-reports:
	case err := <-exited:
		t.Fatalf("chromium exited (%v) before the page reported:\n%s", err, out.String())
	case <-time.After(guard):
		more := ""
		if stuck != nil {
			more = "; " + stuck()
		}
		t.Fatalf("the page reported nothing within %s%s; chromium:\n%s", guard, more, out.String())
	}
	return rep
}
