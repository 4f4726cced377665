package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/reinhq/rein/gateway"
)

// getUpdates is called here, not through the library: the library's
// polling loop moves its offset past an update as soon as it is fetched,
// before any handler has run, so a crash would lose it. The library has no
// exported raw call, so this is a plain Bot API request.

// maxUpdatesBody caps a getUpdates answer (100 updates).
const maxUpdatesBody = 16 << 20

// allowedUpdates are the update kinds the channel asks for.
var allowedUpdates = []string{"message", "callback_query"}

// errRefused is getUpdates' final refusal: the token (401, 404) or a
// webhook in the way (409).
type errRefused struct{ msg string }

func (e *errRefused) Error() string { return e.msg }

// update is the part of a Bot API Update the channel reads
// (https://core.telegram.org/bots/api#update).
type update struct {
	ID            int64          `json:"update_id"`
	Message       *message       `json:"message"`
	CallbackQuery *callbackQuery `json:"callback_query"`
}

type user struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Username  string `json:"username"`
}

type chat struct {
	ID int64 `json:"id"`
}

type message struct {
	ID       int         `json:"message_id"`
	From     *user       `json:"from"`
	Chat     chat        `json:"chat"`
	Text     string      `json:"text"`
	Caption  string      `json:"caption"`
	Photo    []photoSize `json:"photo"`
	Document *document   `json:"document"`
}

type photoSize struct {
	FileID   string `json:"file_id"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	FileSize int64  `json:"file_size"`
}

type document struct {
	FileID   string `json:"file_id"`
	FileName string `json:"file_name"`
	MimeType string `json:"mime_type"`
	FileSize int64  `json:"file_size"`
}

type callbackQuery struct {
	ID      string   `json:"id"`
	From    user     `json:"from"`
	Message *message `json:"message"`
	Data    string   `json:"data"`
}

// apiResponse is the Bot API's envelope, its result left raw.
type apiResponse struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// fetch calls getUpdates with offset (0: from the first unconfirmed one)
// and waits up to timeout for updates.
func (c *Channel) fetch(ctx context.Context, offset int64, timeout time.Duration, limit int) ([]update, error) {
	req := struct {
		Offset         int64    `json:"offset,omitempty"`
		Limit          int      `json:"limit,omitempty"`
		Timeout        int      `json:"timeout"`
		AllowedUpdates []string `json:"allowed_updates"`
	}{offset, limit, int(timeout / time.Second), allowedUpdates}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.apiURL+"/bot"+c.token+"/getUpdates", bytes.NewReader(body))
	if err != nil {
		return nil, errors.New(c.redact(fmt.Sprintf("telegram: getUpdates: %v", err)))
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := c.poll.Do(hr)
	if err != nil {
		return nil, &gateway.RetryError{Err: errors.New(c.redact(fmt.Sprintf("telegram: getUpdates: %v", err)))}
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxUpdatesBody+1))
	if err != nil {
		return nil, &gateway.RetryError{Err: fmt.Errorf("telegram: getUpdates: reading the answer: %w", err)}
	}
	return parseUpdates(resp.StatusCode, data, c.tokenEnv)
}

// parseUpdates reads getUpdates' answer. Errors are *errRefused (final),
// or *gateway.RetryError (429 with its retry_after, else no After).
// An update that does not parse is returned with only its update_id, so
// it is confirmed rather than blocking the queue.
func parseUpdates(status int, data []byte, tokenEnv string) ([]update, error) {
	if len(data) > maxUpdatesBody {
		return nil, &gateway.RetryError{Err: errors.New("telegram: getUpdates: the answer is too large")}
	}
	var r apiResponse
	jsonErr := json.Unmarshal(data, &r)
	if jsonErr != nil || !r.OK {
		code := r.ErrorCode
		if jsonErr != nil || code == 0 {
			code = status
		}
		desc := r.Description
		if desc == "" {
			desc = http.StatusText(code)
		}
		switch {
		case code == http.StatusUnauthorized || code == http.StatusNotFound:
			return nil, &errRefused{fmt.Sprintf("telegram: the bot token was refused: check %s", tokenEnv)}
		case code == http.StatusConflict && strings.Contains(strings.ToLower(desc), "webhook"):
			return nil, &errRefused{"telegram: the bot has a webhook set, so Telegram refuses getUpdates: remove it (call deleteWebhook) or use another bot"}
		case code == http.StatusTooManyRequests:
			return nil, &gateway.RetryError{After: time.Duration(max(r.Parameters.RetryAfter, 0)) * time.Second, Err: fmt.Errorf("telegram: getUpdates: %d %s", code, desc)}
		case jsonErr != nil && code == http.StatusOK:
			return nil, &gateway.RetryError{Err: fmt.Errorf("telegram: getUpdates: the answer is not the Bot API's JSON: %w", jsonErr)}
		}
		return nil, &gateway.RetryError{Err: fmt.Errorf("telegram: getUpdates: %d %s", code, desc)}
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(r.Result, &raws); err != nil {
		return nil, &gateway.RetryError{Err: fmt.Errorf("telegram: getUpdates: the result is not a list of updates: %w", err)}
	}
	out := make([]update, 0, len(raws))
	for _, raw := range raws {
		var u update
		if err := json.Unmarshal(raw, &u); err != nil {
			var id struct {
				ID int64 `json:"update_id"`
			}
			if json.Unmarshal(raw, &id) != nil {
				continue
			}
			u = update{ID: id.ID}
		}
		out = append(out, u)
	}
	return out, nil
}

// redact removes the token from s (net/http errors name the URL).
func (c *Channel) redact(s string) string {
	return strings.ReplaceAll(s, c.token, "<token>")
}
