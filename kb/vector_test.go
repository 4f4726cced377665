package kb

import (
	"reflect"
	"testing"
)

// Nearest keeps the k best, best first, skips other dimensions and zero
// vectors, and breaks ties as told.
func TestNearest(t *testing.T) {
	q := Unit([]float32{1, 0})
	vecs := [][]float32{
		Unit([]float32{0, 1}),    // 0: orthogonal
		Unit([]float32{1, 1}),    // 1
		Unit([]float32{2, 0}),    // 2: same direction
		Unit([]float32{1, 0, 0}), // 3: another dimension
		Unit([]float32{0, 0}),    // 4: zero: nil
		Unit([]float32{3, 3}),    // 5: ties with 1
	}
	got := Nearest(q, vecs, 3, func(i, j int) bool { return i < j })
	var idx []int
	for _, s := range got {
		idx = append(idx, s.Index)
	}
	if !reflect.DeepEqual(idx, []int{2, 1, 5}) {
		t.Errorf("earlier first on ties: %v, want [2 1 5]", idx)
	}
	got = Nearest(q, vecs, 3, func(i, j int) bool { return i > j })
	if got[1].Index != 5 || got[2].Index != 1 {
		t.Errorf("later first on ties: %+v", got)
	}
	if got[0].Score < 0.999 {
		t.Errorf("same direction scored %v, want 1", got[0].Score)
	}
	if n := len(Nearest(q, vecs, 10, func(i, j int) bool { return i < j })); n != 4 {
		t.Errorf("k above the comparable vectors: %d results, want 4", n)
	}
	if Nearest(nil, vecs, 3, nil) != nil || Nearest(q, vecs, 0, nil) != nil {
		t.Error("a zero query or k = 0 returned results")
	}
}
