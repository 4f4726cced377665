package secretenv

import (
	"strings"
	"testing"
)

func TestEnvBounds(t *testing.T) {
	fields := make([]string, 49)
	for i := range fields {
		fields[i] = "0"
	}
	fields[47], fields[48] = "1000", "2000"
	stat := "42 (a) b (c)) " + strings.Join(fields, " ")
	if s, e, err := envBounds([]byte(stat)); err != nil || s != 1000 || e != 2000 {
		t.Fatalf("%d %d %v", s, e, err)
	}
	if _, _, err := envBounds([]byte("42 (a) S 1 2")); err == nil {
		t.Fatal("short stat: no error")
	}
}
