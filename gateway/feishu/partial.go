package feishu

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/reinhq/rein/gateway"
)

// maxPartials bounds the sends kept for a retry; the gateway retries one
// at a time per chat, so a few dozen is plenty.
const maxPartials = 64

// partial is a Send under way: the uuid of each part and the references
// of the parts already posted.
type partial struct {
	uuids []string
	refs  []gateway.MessageRef
}

// partials are the Sends that failed for now, by their message's key.
type partials struct {
	mu    sync.Mutex
	m     map[[32]byte]*partial
	order [][32]byte
}

// take removes and returns the partial of key, or a new one of n parts:
// its uuids derived from stable (an [gateway.Outgoing.Key]) when set, else
// random.
func (p *partials) take(key [32]byte, n int, stable string) *partial {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st, ok := p.m[key]; ok && len(st.uuids) == n {
		delete(p.m, key)
		return st
	}
	st := &partial{}
	for i := range n {
		b := make([]byte, 16)
		if stable != "" {
			sum := sha256.Sum256(fmt.Appendf(nil, "rein reply part\x00%s\x00%d", stable, i))
			copy(b, sum[:])
		} else {
			rand.Read(b)
		}
		st.uuids = append(st.uuids, hex.EncodeToString(b))
	}
	return st
}

// keep stores st for the retry of key, dropping the oldest beyond
// maxPartials.
func (p *partials) keep(key [32]byte, st *partial) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[[32]byte]*partial{}
	}
	p.m[key] = st
	for i, k := range p.order {
		if k == key {
			p.order = append(p.order[:i], p.order[i+1:]...)
			break
		}
	}
	p.order = append(p.order, key)
	for len(p.order) > maxPartials {
		delete(p.m, p.order[0])
		p.order = p.order[1:]
	}
}

// outgoingKey identifies a message by everything in it.
func outgoingKey(m gateway.Outgoing) [32]byte {
	h := sha256.New()
	field := func(s string) {
		binary.Write(h, binary.BigEndian, uint64(len(s)))
		h.Write([]byte(s))
	}
	field(m.ChatID)
	field(m.Text)
	for _, b := range m.Buttons {
		field(b.Label)
		field(b.Data)
	}
	for _, f := range m.Files {
		field(f.Name)
		field(f.MIME)
		field(string(f.Data))
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}
