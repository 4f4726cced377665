// Package redisconn opens the Redis clients of rein's Redis packages
// (eventbus/redisbus, runner/queue/redisqueue) the same way: a URL whose
// errors never show its password, one timeout for dialling and every
// command, no hidden retries, and a PING that fails fast with what to
// check.
package redisconn

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Dial connects to the Redis at url (redis://[user:password@]host:port/db,
// rediss:// for TLS, unix:///path; go-redis's query options apply) as
// client name (unless the URL names one), with timeout on dialling and
// on every command, and checks it answers a PING. Commands are never
// retried by the client: callers retry what is idempotent. who starts
// every error ("redisbus").
func Dial(ctx context.Context, url, who, name string, timeout time.Duration) (*redis.Client, error) {
	ro, err := redis.ParseURL(url)
	if err != nil {
		if uerr := (*neturl.Error)(nil); errors.As(err, &uerr) {
			err = uerr.Err // without the URL and its password
		}
		return nil, fmt.Errorf("%s: bad Redis URL (want redis://host:port/db): %w", who, err)
	}
	ro.MaxRetries = -1
	ro.DialTimeout, ro.ReadTimeout, ro.WriteTimeout = timeout, timeout, timeout
	ro.DialerRetries = 1
	ro.ContextTimeoutEnabled = true
	ro.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	if ro.ClientName == "" {
		ro.ClientName = name
	}
	rdb := redis.NewClient(ro)
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("%s: Redis at %s (db %d) does not answer: %w; check that it runs, "+
			"that this host can reach it and that the URL's password and database are right", who, ro.Addr, ro.DB, err)
	}
	return rdb, nil
}

// RunID returns the run_id of the Redis server (INFO server), which
// changes when it restarts; "" when INFO does not say.
func RunID(ctx context.Context, rdb *redis.Client) (string, error) {
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return "", err
	}
	return ParseRunID(info), nil
}

// ParseRunID returns the run_id line's value of an INFO answer, "" when
// it has none.
func ParseRunID(info string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, "run_id:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
