package redisqueue

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein/runner/queue"
)

// streamTime returns the time in a stream entry ID ("<ms>-<seq>"): when
// Redis added the entry.
func streamTime(id string) (time.Time, error) {
	ms, seq, ok := strings.Cut(id, "-")
	if !ok || len(ms) == 0 || len(ms) > 19 || len(seq) == 0 || len(seq) > 20 {
		return time.Time{}, fmt.Errorf("malformed stream entry ID %.40q", id)
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || n < 0 || ms[0] == '+' {
		return time.Time{}, fmt.Errorf("malformed stream entry ID %.40q", id)
	}
	if _, err := strconv.ParseUint(seq, 10, 64); err != nil || seq[0] == '+' {
		return time.Time{}, fmt.Errorf("malformed stream entry ID %.40q", id)
	}
	return time.UnixMilli(n), nil
}

// replyInt reads an integer of a script's reply.
func replyInt(v any) (int64, bool) {
	switch v := v.(type) {
	case int64:
		return v, true
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// parseTake reads the take script's reply: the token when the lease is
// granted.
func parseTake(res []any) (token int64, ok bool, err error) {
	if len(res) == 0 {
		return 0, false, fmt.Errorf("unexpected take reply %v", res)
	}
	code, cok := replyInt(res[0])
	switch {
	case !cok || code < 0 || code > 3:
		return 0, false, fmt.Errorf("unexpected take reply %v", res)
	case code != 1:
		return 0, false, nil
	case len(res) != 2:
		return 0, false, fmt.Errorf("unexpected take reply %v", res)
	}
	token, tok := replyInt(res[1])
	if !tok || token <= 0 {
		return 0, false, fmt.Errorf("unexpected token in take reply %v", res)
	}
	return token, true, nil
}

// parseRenew reads the renew script's reply: its code, and the lease's
// message when it was taken back (code 2).
func parseRenew(res []any) (code int64, msg string, err error) {
	if len(res) == 0 {
		return 0, "", fmt.Errorf("unexpected renew reply %v", res)
	}
	code, ok := replyInt(res[0])
	switch {
	case !ok || code < 0 || code > 2:
		return 0, "", fmt.Errorf("unexpected renew reply %v", res)
	case code != 2:
		return code, "", nil
	case len(res) != 2:
		return 0, "", fmt.Errorf("unexpected renew reply %v", res)
	}
	msg, _ = res[1].(string)
	if _, err := streamTime(msg); err != nil {
		return 0, "", fmt.Errorf("renew reply: %w", err)
	}
	return code, msg, nil
}

// parseStats reads the stats script's reply.
func parseStats(res []any) (queue.Stats, error) {
	if len(res) != 5 {
		return queue.Stats{}, fmt.Errorf("unexpected stats reply %v", res)
	}
	n, ok1 := replyInt(res[0])
	pending, ok2 := replyInt(res[1])
	first, ok3 := res[2].(string)
	sec, ok4 := replyInt(res[3])
	usec, ok5 := replyInt(res[4])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || n < 0 || pending < 0 {
		return queue.Stats{}, fmt.Errorf("unexpected stats reply %v", res)
	}
	st := queue.Stats{Waiting: int(max(n-pending, 0)), Leased: int(min(pending, n))}
	if first != "" {
		at, err := streamTime(first)
		if err != nil {
			return queue.Stats{}, err
		}
		st.OldestWait = max(time.Unix(sec, usec*1000).Sub(at), 0)
	}
	return st, nil
}
