package queue_test

import (
	"testing"

	"github.com/reinhq/rein/runner/queue"
	"github.com/reinhq/rein/runner/queue/queuetest"
)

func openMemory(t *testing.T, opts queue.Options) queue.Queue {
	t.Helper()
	q, err := queue.NewMemory(opts)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestMemory(t *testing.T) {
	queuetest.Run(t, openMemory)
}

func BenchmarkMemoryLatency(b *testing.B) {
	q, err := queue.NewMemory(queue.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	queuetest.BenchLatency(b, q)
}

func BenchmarkMemoryThroughput(b *testing.B) {
	q, err := queue.NewMemory(queue.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	queuetest.BenchThroughput(b, q)
}
