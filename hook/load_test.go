package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PERM-5: a repository's hooks file must not make rein read without end
// or wait: a link to /dev/zero, a FIFO and a file beyond 1 MiB are
// refused with an error naming the file; a missing one declares nothing.
func TestLoadBounded_PERM5(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("hooks: {}\n"+strings.Repeat("#\n", maxFileBytes)), 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, err string
	}{
		{"a link to /dev/zero", zero, "not a regular file"},
		{"a file beyond 1 MiB", big, "larger than 1024 KiB"},
		{"a directory", dir, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), tt.path) {
				t.Errorf("Load = %v, want %q naming the file", err, tt.err)
			}
		})
	}
	if specs, err := Load(filepath.Join(dir, "missing.yaml")); specs != nil || err != nil {
		t.Errorf("missing file: %v, %v", specs, err)
	}
}
