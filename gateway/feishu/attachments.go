package feishu

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/reinhq/rein/gateway"
)

// attach fetches u's images into its message. An image that is too large
// or that Feishu refuses is named in the text instead; an outage is an
// error, so the event is delivered again later.
func (c *Channel) attach(ctx context.Context, u update) error {
	var notes []string
	for i, key := range u.images {
		data, mime, err := c.fetchImage(ctx, u.messageID, key)
		if _, retry := gateway.RetryAfter(err); retry {
			return err
		}
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("(an image could not be fetched: %v)", err))
		case data == nil:
			notes = append(notes, fmt.Sprintf("(an image larger than %d MB was left out)", gateway.MaxAttachment>>20))
		default:
			u.message.Attachments = append(u.message.Attachments, gateway.Attachment{
				Name: fmt.Sprintf("image%d%s", i+1, extension(mime)), MIME: mime, Data: data})
		}
	}
	if len(notes) > 0 {
		u.message.Text = strings.TrimSpace(u.message.Text + "\n" + strings.Join(notes, "\n"))
	}
	return nil
}

// fetchImage downloads an image of a message the bot received; nil data
// means it is larger than [gateway.MaxAttachment].
func (c *Channel) fetchImage(ctx context.Context, messageID, key string) ([]byte, string, error) {
	const op = "fetch image"
	path := "/open-apis/im/v1/messages/" + url.PathEscape(messageID) + "/resources/" + url.PathEscape(key) + "?type=image"
	for attempt := 0; ; attempt++ {
		tok, err := c.tenantToken(ctx)
		if err != nil {
			return nil, "", err
		}
		resp, err := c.send(ctx, op, http.MethodGet, path, tok, "", nil)
		if err != nil {
			return nil, "", err
		}
		ct := resp.Header.Get("Content-Type")
		if resp.StatusCode != http.StatusOK || strings.HasPrefix(ct, "application/json") {
			var ar apiResponse
			_ = json.NewDecoder(io.LimitReader(resp.Body, maxResponse)).Decode(&ar)
			resp.Body.Close()
			switch ar.Code {
			case codeTokenInvalid, codeTokenMissing, codeTokenMismatch:
				c.dropToken(tok)
				if attempt == 0 {
					continue
				}
			case codeRateLimited:
				return nil, "", &gateway.RetryError{After: resetAfter(resp), Err: &apiError{op, ar.Code, ar.Msg}}
			}
			if ar.Code == 0 {
				return nil, "", fmt.Errorf("feishu: %s: HTTP %d", op, resp.StatusCode)
			}
			return nil, "", &apiError{op, ar.Code, ar.Msg}
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, gateway.MaxAttachment+1))
		resp.Body.Close()
		if err != nil {
			return nil, "", &gateway.RetryError{Err: fmt.Errorf("feishu: %s: %w", op, err)}
		}
		if len(data) > gateway.MaxAttachment {
			return nil, "", nil
		}
		if ct == "" || strings.HasPrefix(ct, "application/octet-stream") {
			ct = http.DetectContentType(data)
		}
		if i := strings.IndexByte(ct, ';'); i >= 0 {
			ct = strings.TrimSpace(ct[:i])
		}
		return data, ct, nil
	}
}

// extension is a file name's extension for an image type.
func extension(mime string) string {
	switch mime {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	}
	return ""
}
