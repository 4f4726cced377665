package redisqueue_test

import (
	"log/slog"
	"testing"

	"github.com/reinhq/rein/runner/queue"
	"github.com/reinhq/rein/runner/queue/queuetest"
)

func BenchmarkRedisLatency(b *testing.B) {
	u := redisURL(b)
	q := newQueue(b, u, newPrefix(b, u), queue.Options{Logger: slog.New(slog.DiscardHandler)})
	queuetest.BenchLatency(b, q)
}

func BenchmarkRedisThroughput(b *testing.B) {
	u := redisURL(b)
	q := newQueue(b, u, newPrefix(b, u), queue.Options{Logger: slog.New(slog.DiscardHandler)})
	queuetest.BenchThroughput(b, q)
}
