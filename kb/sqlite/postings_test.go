package sqlite

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// A block's entries decode to what was encoded.
func TestPostingsRoundTrip(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 9))
	terms := []string{"a", "alpha", "b", "beta", "x\xffy", "日本"}
	slices.Sort(terms)
	want := map[string][]posting{}
	var block []byte
	for _, term := range terms {
		var list []posting
		id := int64(0)
		for range 1 + rnd.IntN(50) {
			id += 1 + rnd.Int64N(1<<uint(rnd.IntN(40)))
			length := 1 + rnd.Int32N(5000)
			list = append(list, posting{id: id, tf: 1 + rnd.Int32N(length), length: length})
		}
		want[term] = list
		block = appendEntry(block, term, list)
	}
	for _, term := range terms {
		enc, count, err := find(block, term)
		if err != nil || enc == nil {
			t.Fatalf("find(%q): %v, %v", term, enc, err)
		}
		var got []posting
		if err := decodeList(enc, count, func(p posting) { got = append(got, p) }); err != nil {
			t.Fatalf("decode %q: %v", term, err)
		}
		if !slices.Equal(got, want[term]) {
			t.Errorf("%q: decoded %v, encoded %v", term, got, want[term])
		}
	}
	for _, missing := range []string{"", "aa", "c", "zzz"} {
		if enc, _, err := find(block, missing); enc != nil || err != nil {
			t.Errorf("find(%q) = %v, %v; want nothing", missing, enc, err)
		}
	}
	ids := []int64{1, 2, 90, 1 << 40}
	if got, err := decodeIDs(encodeIDs(ids)); err != nil || !slices.Equal(got, ids) {
		t.Errorf("decodeIDs(encodeIDs(%v)) = %v, %v", ids, got, err)
	}
}

// Blobs that are not in the format are errors.
func TestPostingsCorrupt(t *testing.T) {
	valid := appendEntry(nil, "term", []posting{{id: 3, tf: 1, length: 4}, {id: 9, tf: 2, length: 2}})
	for name, block := range map[string][]byte{
		"cut short":          valid[:len(valid)-1],
		"term past the end":  {0x7f, 'a'},
		"bad varint":         {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		"terms out of order": append(appendEntry(nil, "zz", []posting{{1, 1, 1}}), appendEntry(nil, "aa", []posting{{1, 1, 1}})...),
		"repeated term":      append(slices.Clone(valid), valid...),
		"ids not increasing": appendEntry(nil, "term", []posting{{id: 3, tf: 1, length: 4}, {id: 3, tf: 1, length: 4}}),
		"tf above length":    appendEntry(nil, "term", []posting{{id: 3, tf: 5, length: 4}}),
		"tf zero":            appendEntry(nil, "term", []posting{{id: 3, tf: 0, length: 4}}),
	} {
		if err := walkBlock(block); !errors.Is(err, errCorrupt) {
			t.Errorf("%s: %v, want errCorrupt", name, err)
		}
	}
	if _, err := decodeIDs([]byte{5, 0}); !errors.Is(err, errCorrupt) {
		t.Errorf("decodeIDs of a repeated id: %v", err)
	}
}

// walkBlock decodes every entry of a block, as a search or a merge does.
func walkBlock(block []byte) error {
	r := blockReader{b: block}
	for {
		term, count, list, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		if _, _, err := find(block, string(term)); err != nil {
			return err
		}
		if err := decodeList(list, count, func(posting) {}); err != nil {
			return err
		}
	}
}

// Any blob decodes to an error or to well-formed postings, never a
// panic (the database file is data: it may be damaged).
func FuzzPostings(f *testing.F) {
	f.Add(appendEntry(nil, "term", []posting{{id: 3, tf: 1, length: 4}, {id: 9, tf: 2, length: 2}}))
	f.Add(append(appendEntry(nil, "a", []posting{{1, 1, 1}}), appendEntry(nil, "b", []posting{{2, 1, 3}})...))
	f.Add([]byte{})
	f.Add([]byte{0xff, 0x01})
	f.Add(encodeIDs([]int64{1, 5, 9}))
	f.Fuzz(func(t *testing.T, b []byte) {
		err := walkBlock(b)
		if err != nil && !errors.Is(err, errCorrupt) {
			t.Errorf("walkBlock: %v, not errCorrupt", err)
		}
		if _, _, err := find(b, "term"); err != nil && !errors.Is(err, errCorrupt) {
			t.Errorf("find: %v, not errCorrupt", err)
		}
		prev := int64(0)
		if err := decodeList(b, len(b)/3, func(p posting) {
			if p.id <= prev || p.tf < 1 || p.tf > p.length {
				t.Errorf("decodeList gave %+v after id %d", p, prev)
			}
			prev = p.id
		}); err != nil && !errors.Is(err, errCorrupt) {
			t.Errorf("decodeList: %v, not errCorrupt", err)
		}
		ids, err := decodeIDs(b)
		if err == nil && !slices.IsSorted(ids) {
			t.Errorf("decodeIDs gave %v", ids)
		}
	})
}
