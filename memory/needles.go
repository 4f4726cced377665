package memory

// needleSet finds which of many words occur in a text in one pass over it
// (Aho–Corasick): the cheap filter that decides which patterns of the
// scanner run at all.
type needleSet struct {
	words []string
	// class maps a byte to its column in next; bytes no word holds are 0.
	class   [256]uint8
	classes int
	// next is the automaton's transitions, classes columns per state,
	// failure links folded in.
	next []int32
	// out lists, per state, the words that end there.
	out [][]int32
}

// newNeedleSet builds the automaton of words.
func newNeedleSet(words []string) *needleSet {
	n := &needleSet{words: words, classes: 1}
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			if n.class[w[i]] == 0 {
				n.class[w[i]] = uint8(n.classes)
				n.classes++
			}
		}
	}
	if n.classes > 255 {
		panic("needleSet: too many distinct bytes")
	}
	// The trie; -1 marks a missing edge.
	n.next = make([]int32, n.classes)
	for i := range n.next {
		n.next[i] = -1
	}
	n.out = [][]int32{nil}
	for id, w := range words {
		s := int32(0)
		for i := 0; i < len(w); i++ {
			c := int32(n.class[w[i]])
			if n.next[s*int32(n.classes)+c] < 0 {
				n.next[s*int32(n.classes)+c] = int32(len(n.out))
				n.out = append(n.out, nil)
				n.next = append(n.next, make([]int32, n.classes)...)
				for j := len(n.next) - n.classes; j < len(n.next); j++ {
					n.next[j] = -1
				}
			}
			s = n.next[s*int32(n.classes)+c]
		}
		n.out[s] = append(n.out[s], int32(id))
	}
	n.link()
	return n
}

// link turns the trie into the automaton: breadth first, each missing
// edge points where the failure link's edge does, and each state outputs
// what its failure state outputs.
func (n *needleSet) link() {
	k := int32(n.classes)
	fail := make([]int32, len(n.out))
	var queue []int32
	for c := int32(0); c < k; c++ {
		if t := n.next[c]; t > 0 {
			queue = append(queue, t)
		} else {
			n.next[c] = 0
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		n.out[s] = append(n.out[s], n.out[fail[s]]...)
		for c := int32(0); c < k; c++ {
			t := n.next[s*k+c]
			if t < 0 {
				n.next[s*k+c] = n.next[fail[s]*k+c]
				continue
			}
			fail[t] = n.next[fail[s]*k+c]
			queue = append(queue, t)
		}
	}
}

// find marks in found (len(words)) the words that occur in text.
func (n *needleSet) find(text string, found []bool) {
	k := int32(n.classes)
	s := int32(0)
	for i := 0; i < len(text); i++ {
		s = n.next[s*k+int32(n.class[text[i]])]
		for _, id := range n.out[s] {
			found[id] = true
		}
	}
}
