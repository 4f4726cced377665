package redisqueue

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/internal/redisconn"
	"github.com/reinhq/rein/runner/queue"
)

func TestStreamTime(t *testing.T) {
	tests := []struct {
		id   string
		want int64 // ms; -1 for an error
	}{
		{"1760000000123-0", 1760000000123},
		{"0-1", 0},
		{"1-18446744073709551615", 1},
		{"", -1}, {"-", -1}, {"12", -1}, {"12-", -1}, {"-3", -1}, {"+1-0", -1}, {"1-+0", -1},
		{"a-0", -1}, {"1-b", -1}, {"99999999999999999999-0", -1}, {"-1-0", -1},
	}
	for _, tt := range tests {
		got, err := streamTime(tt.id)
		switch {
		case tt.want < 0 && err == nil:
			t.Errorf("streamTime(%q) = %v, want an error", tt.id, got)
		case tt.want >= 0 && (err != nil || got.UnixMilli() != tt.want):
			t.Errorf("streamTime(%q) = %v, %v; want %d ms", tt.id, got, err, tt.want)
		}
	}
}

func FuzzStreamTime(f *testing.F) {
	for _, s := range []string{"1760000000123-0", "0-0", "", "-", "1-", "x-y", "1-2-3", "+5-1", " 1-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		at, err := streamTime(id)
		if err != nil {
			return
		}
		ms, seq, _ := strings.Cut(id, "-")
		if at.UnixMilli() < 0 || ms == "" || seq == "" || strings.ContainsAny(id, "+ ") {
			t.Fatalf("accepted %q as %v", id, at)
		}
	})
}

func TestParseReplies(t *testing.T) {
	if tok, ok, err := parseTake([]any{int64(1), "1760000000123001"}); err != nil || !ok || tok != 1760000000123001 {
		t.Errorf("parseTake granted = %d, %v, %v", tok, ok, err)
	}
	for _, code := range []int64{0, 2, 3} {
		if _, ok, err := parseTake([]any{code}); err != nil || ok {
			t.Errorf("parseTake {%d} = %v, %v; want no lease, no error", code, ok, err)
		}
	}
	for _, bad := range [][]any{nil, {int64(9)}, {int64(1)}, {int64(1), "x"}, {int64(1), "-4"}, {"z"}} {
		if _, _, err := parseTake(bad); err == nil {
			t.Errorf("parseTake(%v): no error", bad)
		}
	}
	if code, msg, err := parseRenew([]any{int64(2), "17-0"}); err != nil || code != 2 || msg != "17-0" {
		t.Errorf("parseRenew taken back = %d %q %v", code, msg, err)
	}
	for _, bad := range [][]any{nil, {int64(2)}, {int64(2), "x"}, {int64(7)}} {
		if _, _, err := parseRenew(bad); err == nil {
			t.Errorf("parseRenew(%v): no error", bad)
		}
	}
	st, err := parseStats([]any{int64(5), int64(2), "1000-0", "3", "500000"})
	if diff := cmp.Diff(queue.Stats{Waiting: 3, Leased: 2, OldestWait: 2500 * time.Millisecond}, st); diff != "" || err != nil {
		t.Errorf("parseStats (-want +got):\n%s%v", diff, err)
	}
	if _, err := parseStats([]any{int64(5)}); err == nil {
		t.Error("parseStats of a short reply: no error")
	}
	if got := redisconn.ParseRunID("# Server\r\nredis_version:7.0.15\r\nrun_id:abc123\r\n"); got != "abc123" {
		t.Errorf("parseRunID = %q", got)
	}
}

func TestBusy(t *testing.T) {
	for msg, want := range map[string]bool{"LOADING Redis is loading the dataset in memory": true,
		"MASTERDOWN Link with MASTER is down": true, "ERR unknown command": false, "NOGROUP No such key": false} {
		if got := busy(errors.New(msg)); got != want {
			t.Errorf("busy(%q) = %v, want %v", msg, got, want)
		}
	}
}
