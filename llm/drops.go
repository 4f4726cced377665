package llm

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
)

// The kinds of stream item an adapter drops, for [RecordDrop].
const (
	// DropEvent is a stream event of a type the adapter does not know.
	DropEvent = "event"
	// DropDelta is a piece of a block the adapter does not keep (Anthropic's
	// citations_delta).
	DropDelta = "delta"
	// DropBlock is content the adapter has no place for and cannot keep as an
	// [Opaque] block (a Gemini part, a Chat Completions content part).
	DropBlock = "block"
	// DropOversize is an [Opaque] block over [MaxOpaqueBytes], or one that
	// is not a JSON object with a type, dropped with the other opaque blocks
	// of its reply.
	DropOversize = "oversize"
	// DropReplay is an [Opaque] block a request encoder could not send: it
	// came from another API of the same provider name.
	DropReplay = "replay"
)

// Bounds on what a hostile stream can make the registry hold: a type name is
// at most maxDropType bytes of [A-Za-z0-9_.:-] (else it is counted as
// "invalid"), and past maxDropKeys distinct keys new ones are counted as
// "other". Each key is a Prometheus series.
const (
	maxDropType = 64
	maxDropKeys = 256
)

// DropCount is how often one provider dropped one kind and type of item.
type DropCount struct {
	Provider, Kind, Type string
	N                    uint64
}

type dropKey struct{ provider, kind, typ string }

// drops is the process-wide registry: counting a known key is a lock-free
// map load and an atomic add.
var drops struct {
	m    sync.Map // dropKey → *atomic.Uint64
	mu   sync.Mutex
	keys int
}

// RecordDrop counts one item a stream decoder dropped or could not keep —
// provider is the adapter's name, kind one of the Drop constants, typ the
// vendor's type of the item — and logs it at debug level. Vendor changes show
// up here (`rein_llm_dropped_stream_items_total` in the telemetry package)
// instead of content vanishing silently. It is safe for concurrent use.
func RecordDrop(provider, kind, typ string) {
	typ = dropType(typ)
	k := dropKey{provider, kind, typ}
	c, ok := drops.m.Load(k)
	if !ok {
		c = newDropCounter(&k)
	}
	c.(*atomic.Uint64).Add(1)
	if l := slog.Default(); l.Enabled(context.Background(), slog.LevelDebug) {
		l.Debug("llm: stream item dropped", "provider", provider, "kind", kind, "type", typ)
	}
}

// newDropCounter returns k's counter, made if there is room for another key;
// without room k becomes the provider's "other" of its kind.
func newDropCounter(k *dropKey) any {
	drops.mu.Lock()
	defer drops.mu.Unlock()
	if c, ok := drops.m.Load(*k); ok {
		return c
	}
	if drops.keys >= maxDropKeys {
		k.typ = "other"
		if c, ok := drops.m.Load(*k); ok {
			return c
		}
	}
	drops.keys++
	c, _ := drops.m.LoadOrStore(*k, new(atomic.Uint64))
	return c
}

// dropType is typ as a label value: a hostile stream's type names cannot
// grow the registry without bound.
func dropType(typ string) string {
	if typ == "" {
		return "untyped"
	}
	if len(typ) > maxDropType {
		return "invalid"
	}
	for i := 0; i < len(typ); i++ {
		c := typ[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == ':' || c == '-') {
			return "invalid"
		}
	}
	return typ
}

// Drops returns every count recorded since the process started, sorted by
// provider, kind and type: what the telemetry package exports at scrape
// time.
func Drops() []DropCount {
	var out []DropCount
	drops.m.Range(func(k, v any) bool {
		key := k.(dropKey)
		out = append(out, DropCount{Provider: key.provider, Kind: key.kind, Type: key.typ, N: v.(*atomic.Uint64).Load()})
		return true
	})
	slices.SortFunc(out, func(a, b DropCount) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Type, b.Type))
	})
	return out
}

// DropsOf returns the count of one provider, kind and type: for tests and
// diagnostics.
func DropsOf(provider, kind, typ string) uint64 {
	if c, ok := drops.m.Load(dropKey{provider, kind, dropType(typ)}); ok {
		return c.(*atomic.Uint64).Load()
	}
	return 0
}
