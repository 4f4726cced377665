// Package migration reads the schema migrations the SQL stores embed
// (session/sqlite, session/postgres, kb/sqlite, kb/postgres): files named
// NNNN_name.sql, applied in version order by each store's own runner.
package migration

import (
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Migration is one step of a schema: migrations/NNNN_name.sql.
type Migration struct {
	Version int
	// Name is the file's name without .sql ("0001_init").
	Name string
	SQL  string
}

// Load reads the migrations of dir in fsys, in version order; versions
// must run 1, 2, 3, … without a gap.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, name := range names { // fs.Glob sorts them
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != len(out)+1 {
			return nil, fmt.Errorf("migration %s: want the name NNNN_name.sql with version %d", base, len(out)+1)
		}
		text, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: strings.TrimSuffix(base, ".sql"), SQL: string(text)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no migration in %s", dir)
	}
	return out, nil
}
