package redisbus

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/reinhq/rein/eventbus"
)

// An event travels as one string, the same in its stream entry (field
// "m") and in its pub/sub message:
//
//	<prev> ' ' <version 1> <uvarint id> <flags> <uvarint len> <run id> <uvarint len> <type> <data>
//
// prev is the stream ID of the entry before it ("123-0"; "0" for the
// first of a stream), written by the publish script; flags has bit 0 set
// for a durable event and bit 1 for non-nil data. The session ID is the
// key's or the channel's suffix, so it is not repeated.
const codecVersion = 1

const (
	flagDurable = 1 << iota
	flagData
)

// entryField is the field of a stream entry that holds the message.
const entryField = "m"

var errCorrupt = errors.New("redisbus: malformed event message")

// encode returns the message body of e, without the prev part.
func encode(e *eventbus.Event) []byte {
	buf := make([]byte, 0, 1+3*binary.MaxVarintLen64+1+len(e.RunID)+len(e.Type)+len(e.Data))
	buf = append(buf, codecVersion)
	buf = binary.AppendUvarint(buf, uint64(e.ID))
	var flags byte
	if e.Durable {
		flags |= flagDurable
	}
	if e.Data != nil {
		flags |= flagData
	}
	buf = append(buf, flags)
	buf = binary.AppendUvarint(buf, uint64(len(e.RunID)))
	buf = append(buf, e.RunID...)
	buf = binary.AppendUvarint(buf, uint64(len(e.Type)))
	buf = append(buf, e.Type...)
	return append(buf, e.Data...)
}

// decode parses a message of session sid: the ID of the entry before the
// event, and the event.
func decode(sid, msg string) (prev int64, ev *eventbus.Event, err error) {
	head, body, ok := strings.Cut(msg, " ")
	if !ok {
		return 0, nil, fmt.Errorf("%w: no prev id", errCorrupt)
	}
	if prev, err = parseStreamID(head); err != nil {
		return 0, nil, err
	}
	if len(body) == 0 || body[0] != codecVersion {
		return 0, nil, fmt.Errorf("%w: unknown version", errCorrupt)
	}
	r := reader{s: body[1:]}
	id := r.uvarint()
	flags := r.byte()
	run := r.str()
	typ := r.str()
	if r.bad || id == 0 || id > 1<<63-1 {
		return 0, nil, fmt.Errorf("%w: truncated or bad id", errCorrupt)
	}
	ev = &eventbus.Event{SessionID: sid, ID: int64(id), RunID: run, Type: typ, Durable: flags&flagDurable != 0}
	if flags&flagData != 0 {
		ev.Data = []byte(r.s)
	} else if r.s != "" {
		return 0, nil, fmt.Errorf("%w: data without its flag", errCorrupt)
	}
	return prev, ev, nil
}

// reader takes the fields of a message body in turn; bad is set once one
// does not fit.
type reader struct {
	s   string
	bad bool
}

func (r *reader) uvarint() uint64 {
	var v uint64
	for i := 0; i < binary.MaxVarintLen64; i++ {
		if i >= len(r.s) {
			break
		}
		c := r.s[i]
		if i == binary.MaxVarintLen64-1 && c > 1 {
			break // overflows 64 bits
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			r.s = r.s[i+1:]
			return v
		}
	}
	r.bad = true
	return 0
}

func (r *reader) byte() byte {
	if len(r.s) == 0 {
		r.bad = true
		return 0
	}
	c := r.s[0]
	r.s = r.s[1:]
	return c
}

func (r *reader) str() string {
	n := r.uvarint()
	if r.bad || n > uint64(len(r.s)) {
		r.bad = true
		return ""
	}
	s := r.s[:n]
	r.s = r.s[n:]
	return s
}

// streamID is the stream entry ID of the event id.
func streamID(id int64) string { return strconv.FormatInt(id, 10) + "-0" }

// parseStreamID returns the event ID of a stream entry ID ("123-0"), or 0
// for "0" (no entry).
func parseStreamID(s string) (int64, error) {
	ms, seq, _ := strings.Cut(s, "-")
	id, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || id < 0 || (seq != "" && seq != "0") {
		return 0, fmt.Errorf("%w: bad stream id %q", errCorrupt, s)
	}
	return id, nil
}

// entryEvent decodes a stream entry of session sid.
func entryEvent(sid string, m redis.XMessage) (prev int64, ev *eventbus.Event, err error) {
	msg, ok := m.Values[entryField].(string)
	if !ok {
		return 0, nil, fmt.Errorf("%w: entry %s has no field %q", errCorrupt, m.ID, entryField)
	}
	prev, ev, err = decode(sid, msg)
	if err != nil {
		return 0, nil, fmt.Errorf("entry %s: %w", m.ID, err)
	}
	if id, err := parseStreamID(m.ID); err != nil || id != ev.ID {
		return 0, nil, fmt.Errorf("%w: entry %s holds event %d", errCorrupt, m.ID, ev.ID)
	}
	return prev, ev, nil
}

// publishScript appends an event to its session's stream and publishes it
// on the session's channel, atomically, so that the stream and the channel
// carry the events in the same order and each message names the entry
// before it.
//
// KEYS[1] is the stream, KEYS[2] the channel; ARGV[1] the entry ID,
// ARGV[2] the MAXLEN, ARGV[3] the message body, ARGV[4] the key's TTL in
// milliseconds. It returns {1, prev} when the event was appended, {0,
// prev} when its ID is not above the stream's last one.
var publishScript = sync.OnceValue(func() *redis.Script {
	return redis.NewScript(`
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local prev = '0'
if top[1] then prev = top[1][1] end
local msg = prev .. ' ' .. ARGV[3]
local ok = redis.pcall('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], ARGV[1], 'm', msg)
if type(ok) == 'table' and ok.err then
	if string.find(ok.err, 'equal or smaller', 1, true) then return {0, prev} end
	return ok
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PUBLISH', KEYS[2], msg)
return {1, prev}
`)
})
