package kb

import "slices"

// BestK returns the k best of the n items at(0) … at(n-1), best first.
// better(a, b) says a ranks before b; it must be a strict order (break
// ties in it), or items of equal rank come out in no set order. A bounded
// heap keeps the k best seen so far: no sort of every item, as a search
// scores far more chunks than it returns.
func BestK[T any](k, n int, at func(i int) T, better func(a, b T) bool) []T {
	// h is a heap whose root is the worst of the best k so far.
	h := make([]T, 0, max(0, min(k, n)))
	if k <= 0 {
		return h
	}
	down := func(i int) {
		for {
			w, l, r := i, 2*i+1, 2*i+2
			if l < len(h) && better(h[w], h[l]) {
				w = l
			}
			if r < len(h) && better(h[w], h[r]) {
				w = r
			}
			if w == i {
				return
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	for i := range n {
		c := at(i)
		if len(h) < k {
			h = append(h, c)
			for j := len(h) - 1; j > 0; {
				parent := (j - 1) / 2
				if !better(h[parent], h[j]) {
					break
				}
				h[j], h[parent] = h[parent], h[j]
				j = parent
			}
			continue
		}
		if better(c, h[0]) {
			h[0] = c
			down(0)
		}
	}
	slices.SortFunc(h, func(a, b T) int {
		switch {
		case better(a, b):
			return -1
		case better(b, a):
			return 1
		}
		return 0
	})
	return h
}
