package kb_test

import (
	"testing"

	"github.com/reinhq/rein/kb"
	"github.com/reinhq/rein/kb/kbtest"
)

func TestMemoryConformance(t *testing.T) {
	kbtest.Run(t, func(t *testing.T) kb.Backend { return kb.NewMemory() })
}
