package main

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

//go:embed questions/*.json
var questionFiles embed.FS

// corpus is a tree the questions of one file are asked over.
type corpus struct {
	// name is the corpus's name and its questions file's
	// (questions/NAME.json).
	name string
	// build returns the root to index and what removes it afterwards.
	build func() (root string, cleanup func(), err error)
}

// corpora are the built-in corpora, in the order they are measured.
var corpora = []corpus{
	{name: "goroot", build: func() (string, func(), error) {
		dir, err := goEnv("GOROOT")
		if err != nil {
			return "", nil, err
		}
		return filepath.Join(dir, "src"), func() {}, nil
	}},
	{name: "docs", build: buildDocs},
}

// docSource is a directory whose documentation files the docs corpus
// copies under a name of its own.
type docSource struct {
	env  string // the go env variable the directory is under
	dir  string // the directory under it
	to   string // where its files go in the corpus
	exts []string
}

// docSources make the docs corpus: the Go specification, memory model,
// GODEBUG and assembler guides, and the Markdown documentation of modules
// the module cache holds (rein's own dependencies, so any machine that
// builds rein has them at these versions).
var docSources = []docSource{
	{"GOROOT", "doc", "go", []string{".html", ".md"}},
	{"GOMODCACHE", "github.com/danielgtaylor/huma/v2@v2.37.2/docs/docs", "huma", []string{".md"}},
	{"GOMODCACHE", "github.com/modelcontextprotocol/go-sdk@v1.8.0", "mcp", []string{".md"}},
	{"GOMODCACHE", "github.com/spf13/cobra@v1.10.2", "cobra", []string{".md"}},
	{"GOMODCACHE", "github.com/jackc/pgx/v5@v5.12.0", "pgx", []string{".md"}},
	{"GOMODCACHE", "github.com/redis/go-redis/v9@v9.23.0", "redis", []string{".md"}},
}

// buildDocs copies the docs corpus into a temporary directory.
func buildDocs() (string, func(), error) {
	tmp, err := os.MkdirTemp("", "kbeval-docs-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	for _, src := range docSources {
		base, err := goEnv(src.env)
		if err != nil {
			cleanup()
			return "", nil, err
		}
		from := filepath.Join(base, filepath.FromSlash(src.dir))
		if err := copyDocs(from, filepath.Join(tmp, src.to), src.exts); err != nil {
			cleanup()
			return "", nil, fmt.Errorf("docs corpus: %w (the module is in rein's go.sum: run go mod download)", err)
		}
	}
	return tmp, cleanup, nil
}

// copyDocs copies the files of from with one of exts to the same places
// under to, leaving out hidden and testdata directories.
func copyDocs(from, to string, exts []string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != from && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !hasExt(name, exts) {
			return nil
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}

func hasExt(name string, exts []string) bool {
	for _, e := range exts {
		if strings.HasSuffix(name, e) {
			return true
		}
	}
	return false
}

// goEnv returns $(go env NAME).
func goEnv(name string) (string, error) {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", name, err)
	}
	v := strings.TrimSpace(string(out))
	if v == "" {
		return "", fmt.Errorf("go env %s is empty", name)
	}
	return v, nil
}
