package sqlite

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The posting lists' binary format. A segment's postings are stored as
// blocks (rows of the postings table), each a run of entries sorted by
// term, the terms of one block all before those of the next:
//
//	entry    = uvarint(len(term)) term uvarint(count) uvarint(len(list)) list
//	list     = count × posting
//	posting  = uvarint(id − previous id) uvarint(tf) uvarint(length)
//
// where the first posting's previous id is 0 (so every id is at least 1
// and the ids of a list strictly increase), tf is how often the chunk
// holds the term (at least 1) and length how many terms the chunk holds
// (BM25's length normalisation). A segment's dead chunks are a list of
// uvarint deltas of strictly increasing ids, the first from 0.
//
// Every decoder checks what it reads: a corrupt blob is an error
// (errCorrupt), never a panic, an endless loop or a silently wrong list.

// errCorrupt reports a blob that is not in the format.
var errCorrupt = errors.New("the posting lists are damaged: delete the knowledge base file (.rein/data/kb.db by default; it holds only an index of your files) and index again")

// blockTarget is the size at which a block is cut: a few of them fit an
// 8 KiB page, and a lookup decodes at most one.
const blockTarget = 4096

// posting is one chunk holding a term.
type posting struct {
	id     int64
	tf     int32
	length int32
}

// appendPosting appends p to a list whose last id is prev.
func appendPosting(b []byte, prev int64, p posting) []byte {
	b = binary.AppendUvarint(b, uint64(p.id-prev))
	b = binary.AppendUvarint(b, uint64(p.tf))
	return binary.AppendUvarint(b, uint64(p.length))
}

// appendEntry appends a term's entry: its postings, by increasing id.
func appendEntry(b []byte, term string, list []posting) []byte {
	var enc []byte
	prev := int64(0)
	for _, p := range list {
		enc = appendPosting(enc, prev, p)
		prev = p.id
	}
	return appendEncodedEntry(b, []byte(term), len(list), enc)
}

// appendEncodedEntry appends the entry of a term whose count postings
// are encoded in list.
func appendEncodedEntry(b, term []byte, count int, list []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(term)))
	b = append(b, term...)
	b = binary.AppendUvarint(b, uint64(count))
	b = binary.AppendUvarint(b, uint64(len(list)))
	return append(b, list...)
}

// uvarint reads a uvarint at b[*at:], advancing *at.
func uvarint(b []byte, at *int) (uint64, error) {
	v, n := binary.Uvarint(b[*at:])
	if n <= 0 {
		return 0, errCorrupt
	}
	*at += n
	return v, nil
}

// blockReader walks a block's entries in order.
type blockReader struct {
	b    []byte
	at   int
	prev []byte // the previous entry's term: terms must strictly increase
	seen bool
}

// next returns the next entry's term, count and encoded list (views into
// the block); ok false at the block's end.
func (r *blockReader) next() (term []byte, count int, list []byte, ok bool, err error) {
	if r.at == len(r.b) {
		return nil, 0, nil, false, nil
	}
	n, err := uvarint(r.b, &r.at)
	if err != nil || n > uint64(len(r.b)-r.at) {
		return nil, 0, nil, false, errCorrupt
	}
	term = r.b[r.at : r.at+int(n)]
	r.at += int(n)
	if r.seen && bytes.Compare(term, r.prev) <= 0 {
		return nil, 0, nil, false, errCorrupt
	}
	r.prev, r.seen = term, true
	c, err := uvarint(r.b, &r.at)
	if err != nil {
		return nil, 0, nil, false, err
	}
	size, err := uvarint(r.b, &r.at)
	if err != nil || size > uint64(len(r.b)-r.at) || c > size/3 {
		// (a posting takes 3 bytes at least)
		return nil, 0, nil, false, errCorrupt
	}
	list = r.b[r.at : r.at+int(size)]
	r.at += int(size)
	return term, int(c), list, true, nil
}

// find returns the encoded list of term in a block and its count; nil
// when the block does not hold it.
func find(block []byte, term string) ([]byte, int, error) {
	r := blockReader{b: block}
	key := []byte(term)
	for {
		t, count, list, ok, err := r.next()
		if err != nil || !ok {
			return nil, 0, err
		}
		switch c := bytes.Compare(t, key); {
		case c == 0:
			return list, count, nil
		case c > 0:
			return nil, 0, nil
		}
	}
}

// decodeList calls fn for each of a list's count postings, in order of
// id; it checks the list holds exactly that many well-formed postings.
func decodeList(list []byte, count int, fn func(posting)) error {
	at := 0
	prev := int64(0)
	for range count {
		d, err := uvarint(list, &at)
		if err != nil {
			return err
		}
		tf, err := uvarint(list, &at)
		if err != nil {
			return err
		}
		length, err := uvarint(list, &at)
		if err != nil {
			return err
		}
		if d == 0 || d > math.MaxInt64-uint64(prev) || tf == 0 || tf > math.MaxInt32 || length > math.MaxInt32 || tf > length {
			return errCorrupt
		}
		prev += int64(d)
		fn(posting{id: prev, tf: int32(tf), length: int32(length)})
	}
	if at != len(list) {
		return errCorrupt
	}
	return nil
}

// encodeIDs encodes strictly increasing positive ids.
func encodeIDs(ids []int64) []byte {
	var b []byte
	prev := int64(0)
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(id-prev))
		prev = id
	}
	return b
}

// decodeIDs decodes what encodeIDs wrote.
func decodeIDs(b []byte) ([]int64, error) {
	var out []int64
	prev := int64(0)
	for at := 0; at < len(b); {
		d, err := uvarint(b, &at)
		if err != nil {
			return nil, err
		}
		if d == 0 || d > math.MaxInt64-uint64(prev) {
			return nil, fmt.Errorf("dead chunks: %w", errCorrupt)
		}
		prev += int64(d)
		out = append(out, prev)
	}
	return out, nil
}
