package exec

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	osexec "os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/reinhq/rein/exec/helper"
)

// The in-sandbox half of the egress proxy (SPEC TOOL-7). A command with
// network off but an allow-list runs in a network namespace of its own,
// with loopback only; rein's egress gate listens on a unix socket bound
// into it (egressSocket). The helper, between bubblewrap and the command,
// listens on loopback and carries each connection to that socket: one
// port is the HTTP proxy the command's HTTP_PROXY and HTTPS_PROXY name,
// and each allowed loopback port of the host (127.0.0.1:4873, say) is
// mirrored at the same address inside, tunnelled with CONNECT, so a
// command reaches the host's service by the address it knows.

// egressSocket is where the egress gate's socket appears in the sandbox
// (under its private /tmp).
const egressSocket = "/tmp/.rein-egress.sock"

// proxyEnv points the usual variables at the proxy; loopback goes direct
// (it is the sandbox's own, with the mirrored ports on it).
func proxyEnv(url string) []string {
	noProxy := "localhost,127.0.0.1,::1"
	return []string{
		"HTTP_PROXY=" + url, "HTTPS_PROXY=" + url, "http_proxy=" + url, "https_proxy=" + url,
		"ALL_PROXY=" + url, "all_proxy=" + url, "NO_PROXY=" + noProxy, "no_proxy=" + noProxy,
		"npm_config_proxy=" + url, "npm_config_https_proxy=" + url, "npm_config_noproxy=" + noProxy,
	}
}

// runForwarding serves the forwards, runs argv (under Landlock when the
// rules grant directories) with the proxy's variables, passes on the
// signals it gets, and exits as the command did. It returns only when the
// command could not start.
func runForwarding(r helper.Rules, f helper.Forward, argv []string) error {
	env := os.Environ()
	if f.Proxy {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("egress forwarder: %w", err)
		}
		go serveForward(ln, f.Socket, "")
		env = append(env, proxyEnv("http://"+ln.Addr().String())...)
	}
	for _, m := range f.Mirrors {
		host, port, err := net.SplitHostPort(m)
		if err != nil {
			return fmt.Errorf("egress forwarder: mirror %q: %w", m, err)
		}
		addrs := []string{m}
		if host == "localhost" {
			addrs = []string{net.JoinHostPort("127.0.0.1", port), net.JoinHostPort("::1", port)}
		}
		for i, a := range addrs {
			ln, err := net.Listen("tcp", a)
			if err != nil {
				if i > 0 {
					continue // no IPv6 loopback: 127.0.0.1 serves
				}
				return fmt.Errorf("egress forwarder: cannot mirror %s: %w", a, err)
			}
			go serveForward(ln, f.Socket, m)
		}
	}
	path, err := osexec.LookPath(argv[0])
	if err != nil {
		return err
	}
	c := &osexec.Cmd{Path: path, Args: argv, Env: env, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	if len(r.Dirs) > 0 {
		err = startLandlocked(c, r)
	} else {
		err = c.Start()
	}
	if err != nil {
		return err
	}
	go func() {
		for s := range sigs {
			_ = c.Process.Signal(s)
		}
	}()
	err = c.Wait()
	var ee *osexec.ExitError
	switch {
	case err == nil:
		os.Exit(0)
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			os.Exit(128 + int(ws.Signal()))
		}
		os.Exit(ee.ExitCode())
	}
	return err
}

// serveForward carries each connection of ln to the gate's socket:
// as is (the proxy port), or through a CONNECT to target (a mirror).
func serveForward(ln net.Listener, socket, target string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			up, err := net.Dial("unix", socket)
			if err != nil {
				c.Close()
				return
			}
			var br *bufio.Reader
			if target != "" {
				if br, err = tunnel(up, target); err != nil {
					fmt.Fprintf(os.Stderr, "rein sandbox: %v\n", err)
					up.Close()
					c.Close()
					return
				}
			}
			pipe(c, up, br)
		}()
	}
}

// tunnel asks the gate for a tunnel to target.
func tunnel(up net.Conn, target string) (*bufio.Reader, error) {
	if _, err := fmt.Fprintf(up, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target); err != nil {
		return nil, err
	}
	br := bufio.NewReader(up)
	res, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return nil, fmt.Errorf("egress mirror %s: %w", target, err)
	}
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		return nil, fmt.Errorf("egress mirror %s: %s", target, strings.TrimSpace(string(body)))
	}
	return br, nil
}

// pipe copies both ways until both are done; br, when set, holds what the
// gate sent past its answer.
func pipe(down, up net.Conn, br *bufio.Reader) {
	var from io.Reader = up
	if br != nil {
		from = io.MultiReader(io.LimitReader(br, int64(br.Buffered())), up)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(up, down)
		halfClose(up)
	}()
	_, _ = io.Copy(down, from)
	halfClose(down)
	wg.Wait()
	up.Close()
	down.Close()
}

func halfClose(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

// mirrorAddr is a loopback target as the helper mirrors it.
func mirrorAddr(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }
