package sqlitedb

import (
	"errors"
	"os"
	"path/filepath"
)

// CheckFiles refuses a SQLite database whose file or -wal/-shm companions
// exist as something else than regular files (a link a repository
// planted): opening it would write through the link.
func CheckFiles(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
			return errors.New(filepath.Base(p) + " is not a regular file (a link?); remove it")
		}
	}
	return nil
}
