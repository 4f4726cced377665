package mcptool

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/reinhq/rein/tool"
)

// repoRoot walks up from the test's directory to the one holding go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// npmServer returns the entry point of an npm reference server installed by
// scripts/test, or skips the test.
func npmServer(t testing.TB, pkg string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed; scripts/test installs it with the MCP reference servers")
	}
	p := filepath.Join(repoRoot(t), ".cache", "npm", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s is not installed at %s; run scripts/test (it installs the MCP reference servers with npm)", pkg, p)
	}
	return p
}

// everything is the server-everything reference server over stdio.
func everything(t testing.TB) Server {
	return Server{Name: "everything", Command: "node", Args: []string{npmServer(t, "server-everything"), "stdio"}}
}

// waitFor polls cond until it holds; the bound only keeps a broken test from
// hanging (no test asserts how fast anything is).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// find returns the tool of that name, or fails the test.
func find(t testing.TB, tools []tool.Tool, name string) *Tool {
	t.Helper()
	for _, tl := range tools {
		if tl.Spec().Name == name {
			return tl.(*Tool)
		}
	}
	t.Fatalf("no tool %s in %v", name, names(tools))
	return nil
}

func names(tools []tool.Tool) []string {
	var out []string
	for _, tl := range tools {
		out = append(out, tl.Spec().Name)
	}
	return out
}

// run calls a tool and returns its result's text; the error is always nil.
func run(t testing.TB, tl tool.Tool, input string) tool.Result {
	t.Helper()
	res, err := tl.Run(context.Background(), tool.Call{Name: tl.Spec().Name, Input: []byte(input)})
	if err != nil {
		t.Fatalf("%s: Run returned an error: %v", tl.Spec().Name, err)
	}
	return res
}

// statusOf returns one server's status.
func statusOf(m *Manager, server string) Status {
	for _, s := range m.Status() {
		if s.Server == server {
			return s
		}
	}
	return Status{}
}

// pid returns the process id of a stdio server's current process, or 0.
func pid(m *Manager, server string) int {
	c := m.byName[server]
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live == nil || c.live.proc == nil {
		return 0
	}
	return c.live.proc.cmd.Process.Pid
}

// memServer connects clients to an in-process go-sdk server over in-memory
// transports, one per connection, and can drop those connections.
type memServer struct {
	srv    *mcp.Server
	refuse atomic.Bool // connections fail while set
	mu     sync.Mutex
	ss     []*mcp.ServerSession
}

func (s *memServer) transport(ctx context.Context) (mcp.Transport, error) {
	if s.refuse.Load() {
		return nil, errors.New("connection refused")
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.srv.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.ss = append(s.ss, ss)
	s.mu.Unlock()
	return ct, nil
}

// drop closes every server side of the connections, as a crash would.
func (s *memServer) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ss := range s.ss {
		_ = ss.Close()
	}
	s.ss = nil
}

type textIn struct {
	Text string `json:"text"`
}

type waitIn struct {
	Seconds int `json:"seconds"`
}

// newMemServer builds a server with the tools the unit tests call: echo,
// wait (sleeps, or until cancelled), big (a long text), fail (isError).
func newMemServer() *memServer {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mem", Version: "1"}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes its text.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			return text("echo: " + in.Text), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "wait", Description: "Waits."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in waitIn) (*mcp.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(in.Seconds) * time.Second):
				return text("waited"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "big", Description: "A long text."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text(strings.Repeat("é", MaxOutput)), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "fail", Description: "Fails."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			r := text("it broke")
			r.IsError = true
			return r, nil, nil
		})
	return &memServer{srv: srv}
}
