package runner

import (
	"fmt"

	"github.com/reinhq/rein/workspace"
)

// loadWorkspace loads the configuration layers of caller's run (or
// knowledge base) in dir with the flags: a server's (Tenancy) workspace is
// the directory the caller opened, not an enclosing repository. The
// service's cache serves the last load again while no file it read, listed
// or looked for changed (workspace.Cache); another caller's load is never
// served. The result is shared by the runs it is served to: read only.
func (s *Service) loadWorkspace(caller, dir string, flags map[string]string) (*workspace.Loaded, error) {
	opts := workspace.Options{WorkDir: dir, Getenv: s.cfg.Getenv, Flags: flags}
	if s.cfg.Tenancy != nil {
		opts.Root = dir
	}
	loaded, err := s.loads.Load(caller, opts)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	return loaded, nil
}
