package builtin

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/tool"
)

// ftBackend is a test backend over the host file system: just the file
// methods the file tools use.
type ftBackend struct{ exec.Backend }

func (ftBackend) Name() string { return "test" }
func (ftBackend) ReadFile(_ context.Context, p string) ([]byte, error) {
	return os.ReadFile(p)
}
func (ftBackend) WriteFile(_ context.Context, p string, data []byte, perm fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, perm); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}
func (ftBackend) Stat(_ context.Context, p string) (fs.FileInfo, error) { return os.Stat(p) }

// runTool validates input against the tool's schema, as the registry does,
// and runs it in dir.
func runTool(t *testing.T, tl tool.Tool, dir string, input any) tool.Result {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tool.CompileSchema(tl.Spec().InputSchema)
	if err != nil {
		t.Fatalf("%s schema: %v", tl.Spec().Name, err)
	}
	if err := s.Validate(raw); err != nil {
		t.Fatalf("%s input %s rejected: %v", tl.Spec().Name, raw, err)
	}
	res, err := tl.Run(context.Background(), tool.Call{ID: "c1", Name: tl.Spec().Name, Input: raw, WorkDir: dir})
	if err != nil {
		t.Fatalf("%s: Go error %v", tl.Spec().Name, err)
	}
	return res
}

// writeFiles creates files (path → content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mustContain(t *testing.T, res tool.Result, wantErr bool, subs ...string) {
	t.Helper()
	text := res.TextOf()
	if res.IsError != wantErr {
		t.Fatalf("IsError = %v, want %v; text:\n%s", res.IsError, wantErr, text)
	}
	for _, s := range subs {
		if !strings.Contains(text, s) {
			t.Errorf("result lacks %q; text:\n%s", s, text)
		}
	}
}

func allTools() []tool.Tool {
	tools := FileTools(ftBackend{}, nil)
	return append(tools, NewListDir(), NewGlob(), NewGrep(GrepOptions{}), NewWebFetch(WebFetchOptions{}),
		NewWebSearch(nil), NewTodoWrite(&Todos{}), NewAskUser(nil))
}

// TOOL-1, TOOL-3: every built-in registers, its schema compiles, and its
// description and schema stay within the prompt budget (~800 bytes a tool).
func TestToolSpecsBudget(t *testing.T) {
	tools := allTools()
	if _, err := tool.NewSet(tool.OriginBuiltin, tools...); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, tl := range tools {
		spec := tl.Spec()
		n := len(spec.Name) + len(spec.Description) + len(spec.InputSchema)
		total += n
		t.Logf("%-12s %4d bytes (description %d, schema %d)", spec.Name, n, len(spec.Description), len(spec.InputSchema))
		if n > 1100 {
			t.Errorf("%s: %d bytes, over the 1100 a single tool may take", spec.Name, n)
		}
		if strings.Contains(string(spec.InputSchema), `"null"`) {
			t.Errorf("%s: schema allows null: %s", spec.Name, spec.InputSchema)
		}
	}
	t.Logf("total %d bytes for %d tools", total, len(tools))
	if avg := total / len(tools); avg > 800 {
		t.Errorf("average %d bytes a tool, over 800", avg)
	}
}

// TOOL-1: metadata of each tool, as the scheduler and permission modes see it.
func TestToolMetas(t *testing.T) {
	want := map[string]tool.Meta{
		"read_file":  {ReadOnly: true, ConcurrencySafe: true, Category: tool.CategoryRead},
		"list_dir":   {ReadOnly: true, ConcurrencySafe: true, Category: tool.CategoryRead},
		"glob":       {ReadOnly: true, ConcurrencySafe: true, Category: tool.CategoryRead},
		"grep":       {ReadOnly: true, ConcurrencySafe: true, Category: tool.CategoryRead},
		"web_fetch":  {ReadOnly: true, ConcurrencySafe: true, Category: tool.CategoryNetwork},
		"web_search": {ReadOnly: true, ConcurrencySafe: true, Category: tool.CategoryNetwork},
		"write_file": {Category: tool.CategoryEdit},
		"edit_file":  {Category: tool.CategoryEdit},
		"multi_edit": {Category: tool.CategoryEdit},
		"todo_write": {ReadOnly: true, Category: tool.CategorySession},
		"ask_user":   {ReadOnly: true, Category: tool.CategorySession},
	}
	for _, tl := range allTools() {
		name := tl.Spec().Name
		if got := tool.MetaOf(tl); got != want[name] {
			t.Errorf("%s: meta %+v, want %+v", name, got, want[name])
		}
	}
}

func TestResolveAndDisplayPath(t *testing.T) {
	call := tool.Call{WorkDir: "/w/proj"}
	tests := []struct{ in, abs, shown string }{
		{"a.go", "/w/proj/a.go", "a.go"},
		{"./sub/../b.go", "/w/proj/b.go", "b.go"},
		{"/etc/hosts", "/etc/hosts", "/etc/hosts"},
		{"../other/x", "/w/other/x", "/w/other/x"},
		{"", "/w/proj", "."},
	}
	for _, tt := range tests {
		abs := resolvePath(call, tt.in)
		if abs != tt.abs || displayPath(call, abs) != tt.shown {
			t.Errorf("%q: got %q shown %q, want %q shown %q", tt.in, abs, displayPath(call, abs), tt.abs, tt.shown)
		}
	}
}

func writeFilesB(b *testing.B, path, content string) {
	b.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
}
