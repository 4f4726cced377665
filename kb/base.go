package kb

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Config configures a Base; the zero value of every field but Root and
// Backend means its default.
type Config struct {
	// Root is the directory documents are added from: their paths are
	// relative to it, slash-separated, and nothing outside it is read.
	Root string
	// Backend stores the chunks.
	Backend Backend
	// Embedder embeds chunks and queries; nil means keyword search only.
	Embedder Embedder
	// EmbeddingModel names the Embedder's model. It is stamped on every
	// document, so changing it re-embeds; required with an Embedder.
	EmbeddingModel string
	// EmbedBatch is how many chunks one Embed call gets; 0 means 64.
	EmbedBatch int
	// Weights weigh the passes in the fusion; default 1.0 each.
	Weights Weights
	// Ranking tunes how the keyword pass ranks documents.
	Ranking Ranking
	// RRFK is the k of reciprocal rank fusion; 0 means 60.
	RRFK float64
	// MaxFileSize is the largest file indexed, in bytes; 0 means 1 MiB.
	MaxFileSize int64
	// Chunk tunes how documents are cut into chunks.
	Chunk ChunkOptions
	// Ignore, when set, is asked about every file and directory a walk
	// meets (its slash-separated path relative to Root) and skips those
	// it reports (the integrator wires .gitignore handling here). A walk
	// always skips .git, node_modules and hidden files and directories.
	Ignore func(relPath string, isDir bool) bool
	// Sensitive, when set, names the files never indexed, even when named
	// outright (keys, .env: the permission policy's sensitive files), so a
	// search never shows the model what its tools may not read. It gets
	// the file's absolute path and returns the pattern it matched.
	Sensitive func(abs string) (pattern string, ok bool)
	// Workers is how many files are read and chunked at once; 0 means
	// GOMAXPROCS.
	Workers int
	// Now is the clock stamping Document.Indexed; nil means time.Now.
	Now func() time.Time
}

// Base is a knowledge base: files of a root directory indexed into a
// Backend, searched by keyword and (with an Embedder) by vector. Its
// methods are safe for concurrent use; writes (Add, Reindex, Remove) run
// one at a time, searches alongside them.
type Base struct {
	cfg      Config
	root     string // absolute, symbolic links resolved
	rootLex  string // absolute, as configured
	weights  Weights
	writeMu  sync.Mutex
	backend  Backend
	embedder Embedder
}

// Search limits.
const (
	DefaultTopK       = 8
	MaxTopK           = 50
	DefaultCandidates = 50
	MaxCandidates     = 1000
)

// New returns a Base over cfg.Backend; it checks that Root is a directory.
func New(cfg Config) (*Base, error) {
	if cfg.Backend == nil {
		return nil, errors.New("kb: new: no backend")
	}
	if cfg.Root == "" {
		return nil, errors.New("kb: new: no root directory")
	}
	if cfg.Embedder != nil && cfg.EmbeddingModel == "" {
		return nil, errors.New("kb: new: an Embedder needs an EmbeddingModel name (stamped on documents so that changing the model re-embeds them)")
	}
	if cfg.Embedder == nil {
		cfg.EmbeddingModel = ""
	}
	lex, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("kb: new: root %s: %w", cfg.Root, err)
	}
	real, err := filepath.EvalSymlinks(lex)
	if err != nil {
		return nil, fmt.Errorf("kb: new: root %s: %w", cfg.Root, err)
	}
	if cfg.EmbedBatch <= 0 {
		cfg.EmbedBatch = 64
	}
	if cfg.RRFK <= 0 {
		cfg.RRFK = 60
	}
	if cfg.MaxFileSize <= 0 {
		cfg.MaxFileSize = 1 << 20
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Chunk = cfg.Chunk.withDefaults()
	return &Base{cfg: cfg, root: real, rootLex: lex, weights: cfg.Weights.withDefaults(),
		backend: cfg.Backend, embedder: cfg.Embedder}, nil
}

// Root returns the absolute root directory, symbolic links resolved.
func (b *Base) Root() string { return b.root }

// Mode is "hybrid" with an Embedder, else "keyword".
func (b *Base) Mode() string {
	if b.embedder != nil {
		return ModeHybrid
	}
	return ModeKeyword
}

// Search modes.
const (
	ModeHybrid  = "hybrid"
	ModeKeyword = "keyword"
)

// Documents lists the indexed documents by path.
func (b *Base) Documents(ctx context.Context) ([]Document, error) {
	docs, err := b.backend.Documents(ctx)
	if err != nil {
		return nil, fmt.Errorf("kb: documents: %w", err)
	}
	return docs, nil
}

// Remove removes a document, or every document under a directory, from
// the index (the files stay on disk) and returns how many it removed;
// ErrNotFound when none is at or under path. path is relative to Root
// (or absolute inside it); "." removes everything.
func (b *Base) Remove(ctx context.Context, p string) (int, error) {
	b.writeMu.Lock()
	defer b.writeMu.Unlock()
	rel, err := b.relName(p)
	if err != nil {
		return 0, fmt.Errorf("kb: remove %s: %w", p, err)
	}
	docs, err := b.backend.Documents(ctx)
	if err != nil {
		return 0, fmt.Errorf("kb: remove %s: %w", p, err)
	}
	n := 0
	for _, d := range docs {
		if !under(d.Path, rel) {
			continue
		}
		if err := b.backend.Delete(ctx, d.Path); err != nil && !errors.Is(err, ErrNotFound) {
			return n, fmt.Errorf("kb: remove %s: %w", p, err)
		}
		n++
	}
	if n == 0 {
		return 0, fmt.Errorf("kb: remove %s: %w: no indexed document is at or under %q (list them with `rein kb list`)",
			p, ErrNotFound, rel)
	}
	return n, nil
}

// relName turns a path the caller named into a document path: relative to
// the root, slash-separated, cleaned. It does not touch the disk.
func (b *Base) relName(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if filepath.IsAbs(p) {
		for _, root := range []string{b.rootLex, b.root} {
			if r, err := filepath.Rel(root, p); err == nil && !escapes(r) {
				return path.Clean(filepath.ToSlash(r)), nil
			}
		}
		return "", fmt.Errorf("%s is outside the knowledge base root %s", p, b.root)
	}
	r := path.Clean(filepath.ToSlash(p))
	if escapes(r) {
		return "", fmt.Errorf("%s is outside the knowledge base root %s", p, b.root)
	}
	return r, nil
}

// escapes reports a relative path leading out of its base.
func escapes(rel string) bool {
	rel = filepath.ToSlash(rel)
	return rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel)
}

// under reports whether document path p is dir or inside it ("." holds
// everything).
func under(p, dir string) bool {
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}
