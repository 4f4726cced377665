package kb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"sync"
	"time"
)

// Report tells what an indexing run did.
type Report struct {
	// Added, Updated and Unchanged count the documents indexed for the
	// first time, re-indexed because their content (or the embedding
	// model) changed, and left as they were; Removed those that left the
	// index (their file is gone or can no longer be indexed).
	Added     int `json:"added"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	Removed   int `json:"removed"`
	// Skipped lists the files passed over, with the reason.
	Skipped []Skip `json:"skipped,omitempty"`
	// Chunks counts the chunks written, Bytes the bytes of files read.
	Chunks int   `json:"chunks"`
	Bytes  int64 `json:"bytes"`
	// Mode is "hybrid" when chunks were embedded, else "keyword".
	Mode string `json:"mode"`
}

// Progress is where an indexing run is: Done of Total files, Bytes read,
// the Path last handled.
type Progress struct {
	Done  int    `json:"done"`
	Total int    `json:"total"`
	Bytes int64  `json:"bytes"`
	Path  string `json:"path"`
}

// progressEvery is how often an indexing run reports its progress at most.
const progressEvery = 50 * time.Millisecond

// Batch limits of the writes: documents and bytes of text a write holds.
const (
	batchDocs  = 256
	batchBytes = 8 << 20
)

// Add indexes files and directories under Root (paths relative to it, or
// absolute inside it): new and changed files are (re-)indexed, unchanged
// ones skipped by content hash, and under an added directory the documents
// whose file is gone leave the index. A path outside Root, also through a
// symbolic link, fails the whole Add before anything is written; a file
// that cannot be indexed (binary, too large, not UTF-8, unreadable) is
// reported in Report.Skipped and the others go on. An embedder failure
// stops the Add with an error; documents written until then are kept
// (each document is written whole or not at all). progress, when not nil,
// is called from one goroutine at a time, at most every 50 ms and once at
// the end.
func (b *Base) Add(ctx context.Context, paths []string, progress func(Progress)) (*Report, error) {
	b.writeMu.Lock()
	defer b.writeMu.Unlock()
	if len(paths) == 0 {
		return nil, errors.New("kb: add: no path given: name the files or directories to index")
	}
	var targets []target
	for _, p := range paths {
		t, err := b.resolve(p)
		if err != nil {
			return nil, fmt.Errorf("kb: add %s: %w", p, err)
		}
		targets = append(targets, t)
	}
	rep := &Report{Mode: b.Mode()}
	var files []file
	var err error
	for _, t := range targets {
		if files, rep.Skipped, err = b.walk(ctx, t, files, rep.Skipped); err != nil {
			return rep, fmt.Errorf("kb: add: %w", err)
		}
	}
	files = uniqueFiles(files)
	existing, err := b.existing(ctx)
	if err != nil {
		return rep, fmt.Errorf("kb: add: %w", err)
	}
	seen, err := b.index(ctx, files, existing, rep, progress)
	if err != nil {
		return rep, fmt.Errorf("kb: add: %w", err)
	}
	for _, t := range targets {
		if !t.dir {
			continue
		}
		for _, d := range existing {
			if under(d.Path, t.rel) && !seen[d.Path] {
				if err := b.backend.Delete(ctx, d.Path); err != nil && !errors.Is(err, ErrNotFound) {
					return rep, fmt.Errorf("kb: add: remove %s, whose file is gone: %w", d.Path, err)
				}
				seen[d.Path] = true
				rep.Removed++
			}
		}
	}
	return rep, nil
}

// Reindex checks every indexed document against its file: changed ones are
// re-indexed, those whose file is gone (or can no longer be indexed)
// removed, unchanged ones skipped. It adds no new file.
func (b *Base) Reindex(ctx context.Context, progress func(Progress)) (*Report, error) {
	b.writeMu.Lock()
	defer b.writeMu.Unlock()
	rep := &Report{Mode: b.Mode()}
	existing, err := b.existing(ctx)
	if err != nil {
		return rep, fmt.Errorf("kb: reindex: %w", err)
	}
	var files []file
	for _, d := range existing {
		t, err := b.resolve(d.Path)
		if err == nil {
			if s, refused := b.sensitive(t.abs, d.Path); refused {
				err = errors.New(s.Reason) // indexed before it was sensitive: removed
			}
		}
		switch {
		case err == nil && !t.dir:
			files = append(files, file{abs: t.abs, rel: d.Path})
			continue
		case err == nil:
			err = errors.New("now a directory")
		case errors.Is(err, fs.ErrNotExist):
			err = nil
		}
		if err != nil {
			rep.Skipped = append(rep.Skipped, Skip{Path: d.Path, Reason: err.Error()})
		}
		if err := b.backend.Delete(ctx, d.Path); err != nil && !errors.Is(err, ErrNotFound) {
			return rep, fmt.Errorf("kb: reindex: remove %s: %w", d.Path, err)
		}
		rep.Removed++
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	if _, err := b.index(ctx, files, existing, rep, progress); err != nil {
		return rep, fmt.Errorf("kb: reindex: %w", err)
	}
	return rep, nil
}

// existing maps the indexed documents by path.
func (b *Base) existing(ctx context.Context) (map[string]Document, error) {
	docs, err := b.backend.Documents(ctx)
	if err != nil {
		return nil, fmt.Errorf("documents: %w", err)
	}
	m := make(map[string]Document, len(docs))
	for _, d := range docs {
		m[d.Path] = d
	}
	return m, nil
}

// uniqueFiles drops the repeats of files named twice (by overlapping
// paths given to Add), keeping the first.
func uniqueFiles(files []file) []file {
	seen := make(map[string]bool, len(files))
	out := files[:0]
	for _, f := range files {
		if !seen[f.rel] {
			seen[f.rel] = true
			out = append(out, f)
		}
	}
	return out
}

// batch is a group of documents written (and embedded) together.
type batch struct {
	entries []Entry
	existed []bool
	bytes   int
	chunks  int
}

// run is the state of one indexing run shared by its stages.
type run struct {
	b        *Base
	existing map[string]Document
	rep      *Report
	mu       sync.Mutex // guards rep's counts as writers update them
	cancel   context.CancelCauseFunc
	now      time.Time
}

// index reads, chunks, embeds and writes files: readers (Config.Workers)
// load files in parallel, this goroutine gathers them into batches, and
// writers embed and store the batches. It returns the paths of the files
// found indexable (written or unchanged).
func (b *Base) index(ctx context.Context, files []file, existing map[string]Document, rep *Report,
	progress func(Progress)) (map[string]bool, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := &run{b: b, existing: existing, rep: rep, cancel: cancel, now: b.cfg.Now().UTC()}

	jobs := make(chan file)
	loadedCh := make(chan loaded, 2*b.cfg.Workers)
	var readers sync.WaitGroup
	for range b.cfg.Workers {
		readers.Go(func() {
			for f := range jobs {
				loadedCh <- b.load(f, existing)
			}
		})
	}
	go func() {
		defer close(jobs)
		for _, f := range files {
			select {
			case jobs <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { readers.Wait(); close(loadedCh) }()

	batches := make(chan *batch)
	var writers sync.WaitGroup
	nWriters := 2
	if b.embedder != nil {
		nWriters = 4
	}
	for range nWriters {
		writers.Go(func() {
			for bt := range batches {
				if err := r.write(ctx, bt); err != nil {
					cancel(err)
				}
			}
		})
	}
	seen := r.gather(ctx, loadedCh, batches, len(files), progress)
	close(batches)
	writers.Wait()
	if err := context.Cause(ctx); err != nil {
		return seen, err
	}
	return seen, nil
}

// gather counts what the readers loaded, reports progress, removes the
// documents whose file can no longer be indexed, and sends the rest in
// batches to the writers.
func (r *run) gather(ctx context.Context, loadedCh <-chan loaded, batches chan<- *batch, total int,
	progress func(Progress)) map[string]bool {
	seen := map[string]bool{}
	cur := &batch{}
	flush := func() {
		if len(cur.entries) == 0 {
			return
		}
		select {
		case batches <- cur:
		case <-ctx.Done():
		}
		cur = &batch{}
	}
	var p Progress
	p.Total = total
	last := time.Time{}
	for l := range loadedCh {
		if ctx.Err() != nil {
			continue
		}
		p.Done++
		p.Bytes += l.size
		p.Path = l.rel
		if progress != nil && time.Since(last) >= progressEvery {
			progress(p)
			last = time.Now()
		}
		r.rep.Bytes += l.size
		_, existed := r.existing[l.rel]
		switch {
		case l.skip != "":
			r.rep.Skipped = append(r.rep.Skipped, Skip{Path: l.rel, Reason: l.skip})
			if existed {
				if err := r.b.backend.Delete(ctx, l.rel); err != nil && !errors.Is(err, ErrNotFound) {
					r.cancel(fmt.Errorf("remove %s, which can no longer be indexed: %w", l.rel, err))
					continue
				}
				r.mu.Lock()
				r.rep.Removed++
				r.mu.Unlock()
			}
			continue
		case l.unchanged:
			seen[l.rel] = true
			r.mu.Lock()
			r.rep.Unchanged++
			r.mu.Unlock()
			continue
		}
		seen[l.rel] = true
		doc := Document{Path: l.rel, Hash: l.hash, Size: l.size, Chunks: len(l.chunks),
			Embedding: r.b.cfg.EmbeddingModel, Indexed: r.now}
		cur.entries = append(cur.entries, Entry{Doc: doc, Chunks: l.chunks})
		cur.existed = append(cur.existed, existed)
		cur.bytes += int(l.size)
		cur.chunks += len(l.chunks)
		if r.full(cur) {
			flush()
		}
	}
	flush()
	if progress != nil {
		progress(p)
	}
	return seen
}

// full reports whether a batch is ready to write.
func (r *run) full(bt *batch) bool {
	if r.b.embedder != nil {
		return bt.chunks >= r.b.cfg.EmbedBatch
	}
	return len(bt.entries) >= batchDocs || bt.bytes >= batchBytes
}

// write embeds a batch's chunks (when there is an Embedder) and stores its
// documents, in one write when the backend is a Batcher.
func (r *run) write(ctx context.Context, bt *batch) error {
	if ctx.Err() != nil {
		return nil
	}
	if r.b.embedder != nil {
		if err := r.b.embed(ctx, bt.entries); err != nil {
			return err
		}
	}
	if batcher, ok := r.b.backend.(Batcher); ok {
		if err := batcher.PutBatch(ctx, bt.entries); err != nil {
			return fmt.Errorf("store %d documents (%s …): %w", len(bt.entries), bt.entries[0].Doc.Path, err)
		}
		r.count(bt, len(bt.entries))
		return nil
	}
	for i, e := range bt.entries {
		if err := r.b.backend.Put(ctx, e.Doc, e.Chunks, e.Vectors); err != nil {
			r.count(bt, i)
			return fmt.Errorf("store %s: %w", e.Doc.Path, err)
		}
	}
	r.count(bt, len(bt.entries))
	return nil
}

// count records the first n entries of a batch as written.
func (r *run) count(bt *batch, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range n {
		if bt.existed[i] {
			r.rep.Updated++
		} else {
			r.rep.Added++
		}
		r.rep.Chunks += len(bt.entries[i].Chunks)
	}
}
