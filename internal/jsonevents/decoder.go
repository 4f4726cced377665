// Package jsonevents reads vendor replies for the adapters, which share it:
// the server-sent events of a stream ([Reader]: byte-order mark, keep-alives
// and framing handled once for every vendor), the JSON data of each event
// ([Decoder]: one json.Decoder that keeps its buffers and scanner between
// events, a third of the allocations of json.Unmarshal per event), and the
// estimate of a reply's usage when the vendor reported none
// ([EstimateUsage]).
package jsonevents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Decoder decodes one event's data at a time. The zero value is ready to use.
// After an error the decoder is spent, as is the stream it reads.
type Decoder struct {
	dec  *json.Decoder
	src  []byte // what the decoder has yet to read of the current event
	sent int64  // bytes handed to the decoder so far
}

// Read hands the json.Decoder the current event; io.EOF means the event
// ended inside a JSON value.
func (d *Decoder) Read(p []byte) (int, error) {
	if len(d.src) == 0 {
		return 0, io.EOF
	}
	n := copy(p, d.src)
	d.src = d.src[n:]
	d.sent += int64(n)
	return n, nil
}

// Decode decodes data, which must be exactly one JSON value, into v. A
// value cut short is io.ErrUnexpectedEOF; trailing data is an error.
func (d *Decoder) Decode(data []byte, v any) error {
	if d.dec == nil {
		d.dec = json.NewDecoder(d)
	}
	d.src = data
	if err := d.dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	if len(d.src) > 0 || d.dec.InputOffset() != d.sent {
		// Whatever follows the value must be white space; the decoder skips
		// what it already buffered when it reads the next event.
		if !blank(d.dec.Buffered()) || len(bytes.TrimSpace(d.src)) > 0 {
			return fmt.Errorf("event data holds more than one JSON value: %.100s", data)
		}
		d.src = nil // never handed over, so not counted in sent
	}
	return nil
}

// blank reports whether r holds only JSON white space. Reading the
// decoder's Buffered view does not consume it.
func blank(r io.Reader) bool {
	br, ok := r.(io.ByteReader)
	if !ok {
		rest, _ := io.ReadAll(r)
		return len(bytes.TrimSpace(rest)) == 0
	}
	for {
		c, err := br.ReadByte()
		if err != nil {
			return true
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
}
