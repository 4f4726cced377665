package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/reinhq/rein/internal/sqlitedb"
	"github.com/reinhq/rein/kb"
	kbsqlite "github.com/reinhq/rein/kb/sqlite"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/builtin"
	"github.com/reinhq/rein/tool/kbtool"
	"github.com/reinhq/rein/workspace"
)

// KBFile is where a workspace keeps its knowledge base (SPEC KB-3),
// relative to its root: an SQLite file beside the history mirror, never
// committed (rein init's .gitignore leaves .rein/data out).
const KBFile = ".rein/data/kb.db"

// KnowledgeBase is a workspace's knowledge base, open.
type KnowledgeBase struct {
	*kb.Base
	// Model is the embedding model ("" for keyword search only).
	Model string
	// Path is the database file; "" for a knowledge base kept in a
	// shared database (see [KBNamespaces]).
	Path string
	// Namespace names the knowledge base in the shared database; "" for
	// the file.
	Namespace string
	store     kb.Backend
}

// Close closes the database.
func (k *KnowledgeBase) Close() error { return k.store.Close() }

// ErrNoKnowledgeBase is returned by OpenKnowledgeBase when the workspace
// has none and create is false.
var ErrNoKnowledgeBase = errors.New("this workspace has no knowledge base yet: add documents with rein kb add PATH")

// EmbedderResolver turns an embedding model string into an embedder; front
// ends pick the adapters (docs/architecture.md, "Layers and arrows"), as
// they do with Resolver.
type EmbedderResolver func(reg *registry.Registry, spec string) (llm.Embedder, error)

// OpenKnowledgeBase opens the knowledge base of the workspace l loaded —
// creating it when create, else failing with ErrNoKnowledgeBase when it
// does not exist — with the embedding model of kb.embedding_model
// resolved by embed through reg (none: keyword search only) and the
// workspace's ignore files deciding what a walk skips. It is the SQLite
// file KBFile of the workspace: the CLI's, and a server's without a
// shared database (see [Service.KnowledgeBase]).
func OpenKnowledgeBase(l *workspace.Loaded, reg *registry.Registry, embed EmbedderResolver, create bool) (*KnowledgeBase, error) {
	return openKnowledgeBase(l, reg, embed, create, nil)
}

// openKnowledgeBase is OpenKnowledgeBase within a server's fence (nil:
// none; see newKnowledgeBase).
func openKnowledgeBase(l *workspace.Loaded, reg *registry.Registry, embed EmbedderResolver, create bool, fence *builtin.Fence) (*KnowledgeBase, error) {
	root := l.Workspace.Root
	if root == "" {
		return nil, errors.New("a knowledge base needs a workspace directory")
	}
	path := filepath.Join(root, filepath.FromSlash(KBFile))
	if err := checkDataDir(root); err != nil {
		return nil, err
	}
	if err := sqlitedb.CheckFiles(path); err != nil {
		return nil, fmt.Errorf("%s: %w", KBFile, err)
	}
	if !create {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, ErrNoKnowledgeBase
		}
	}
	store, err := kbsqlite.Open(path, kbsqlite.Options{})
	if err != nil {
		return nil, err
	}
	k, err := newKnowledgeBase(l, reg, embed, store, fence)
	if err != nil {
		return nil, err
	}
	k.Path = path
	return k, nil
}

// newKnowledgeBase puts a knowledge base together over store for the
// workspace l loaded: its root, ignore and sensitive files, and embedding
// model; a server's fence (nil for the CLI) keeps what its runs' tools may
// not reach (its data directory, other roots) out of the index too. It
// closes store when it fails.
func newKnowledgeBase(l *workspace.Loaded, reg *registry.Registry, embed EmbedderResolver, store kb.Backend, fence *builtin.Fence) (*KnowledgeBase, error) {
	root := l.Workspace.Root
	if root == "" {
		_ = store.Close()
		return nil, errors.New("a knowledge base needs a workspace directory")
	}
	// The policy's sensitive files (defaults, the user's, the workspace's
	// additions; its exceptions once trusted) are never indexed: kb_search
	// must not show what read_file may not.
	sensitive := tool.NewSensitiveSet(append(slices.Clone(tool.DefaultSensitiveFiles),
		l.Permissions(permission.Settings{}).SensitiveFiles...))
	cfg := kb.Config{Root: root, Ignore: builtin.IgnoreFunc(root), Sensitive: func(abs string) (string, bool) {
		if fence != nil && fence.Check(abs) != nil {
			return "the server's fence: its own files, which no run's tool reaches", true
		}
		return sensitive.Match(abs)
	}, Backend: store}
	model := ""
	if l.Effective != nil {
		model = l.Effective.String(workspace.KBEmbeddingModel)
	}
	if model != "" {
		if embed == nil {
			_ = store.Close()
			return nil, fmt.Errorf("kb.embedding_model %s: this front end cannot call embedding models; unset it for keyword search", model)
		}
		emb, err := embed(reg, model)
		if err != nil {
			_ = store.Close()
			return nil, fmt.Errorf("kb.embedding_model %s: %w", model, err)
		}
		cfg.Embedder, cfg.EmbeddingModel = emb, model
	}
	base, err := kb.New(cfg)
	if err != nil {
		_ = store.Close()
		return nil, err
	}
	return &KnowledgeBase{Base: base, Model: model, store: store}, nil
}

// kbTool is the kb_search tool when the workspace has a knowledge base
// (nil otherwise): the base opens on the first search and closes with
// the conversation. A server with a shared database (Config.KnowledgeBases)
// searches the workspace's namespace there, offered once anything was
// written to it; otherwise the workspace's KBFile, offered once it exists.
func (s *Setup) kbTool() *kbTool {
	if s.ws.Root == "" {
		return nil
	}
	open := func() (*KnowledgeBase, error) {
		return OpenKnowledgeBase(s.cfg.Loaded, s.reg, s.cfg.ResolveEmbedder, false)
	}
	if s.cfg.KnowledgeBases != nil {
		if !s.sharedKBExists() {
			return nil
		}
		fence := s.cfg.Tenancy.fence(s.ws.Root)
		open = func() (*KnowledgeBase, error) {
			return openShared(s.cfg.KnowledgeBases, s.cfg.KBNamespace, s.cfg.Loaded, s.reg, s.cfg.ResolveEmbedder, &fence)
		}
	} else if _, err := os.Stat(filepath.Join(s.ws.Root, filepath.FromSlash(KBFile))); err != nil {
		return nil
	}
	t := &kbTool{}
	t.Tool = kbtool.New(func(context.Context) (*kb.Base, error) {
		t.mu.Lock()
		defer t.mu.Unlock()
		k, err := open()
		if err != nil {
			return nil, err
		}
		t.open = k
		return k.Base, nil
	})
	return t
}

// kbTool is the kb_search tool with the base it opened, to close.
type kbTool struct {
	tool.Tool
	mu   sync.Mutex
	open *KnowledgeBase
}

// Meta is the search tool's: a read tool, safe to run in parallel.
func (t *kbTool) Meta() tool.Meta {
	if m, ok := t.Tool.(tool.MetaTool); ok {
		return m.Meta()
	}
	return tool.Meta{}
}

// Close closes the base if a search opened it.
func (t *kbTool) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.open == nil {
		return nil
	}
	err := t.open.Close()
	t.open = nil
	return err
}

// checkDataDir refuses a workspace whose .rein or .rein/data is a link or
// a file: a repository could plant one to have rein create or write a
// database elsewhere. Missing ones are fine (they are created).
func checkDataDir(root string) error {
	for _, rel := range []string{".rein", ".rein/data"} {
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
		if err == nil && !fi.IsDir() {
			return fmt.Errorf("%s is not a directory (a link or a file): rein keeps its databases only in a real directory; remove it", rel)
		}
	}
	return nil
}
