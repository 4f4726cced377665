package telegram

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"

	"github.com/go-telegram/bot"

	"github.com/reinhq/rein/gateway"
)

// attachment fetches a file a user sent: getFile for its path, then a
// download from <api>/file/bot<token>/<path>. A file larger than
// [gateway.MaxAttachment], or one Telegram will not hand out (getFile
// gives bots files of up to 20 MB), comes back as a note for the text
// instead. err is set only for a failure worth trying again (429, 5xx, the
// network), so the update is fetched again.
func (c *Channel) attachment(ctx context.Context, fileID string, size int64, name, mimeType string) (*gateway.Attachment, string, error) {
	label := name
	if label == "" {
		label = "a file"
	}
	if size > gateway.MaxAttachment {
		return nil, tooLarge(label, size), nil
	}
	f, err := c.bot.GetFile(ctx, &bot.GetFileParams{FileID: fileID})
	if err != nil {
		err = c.classify(ctx, "getFile", err)
		if _, retry := gateway.RetryAfter(err); retry || ctx.Err() != nil {
			return nil, "", err
		}
		return nil, fmt.Sprintf("[%s was left out: Telegram would not hand it out: %v]", label, err), nil
	}
	if f.FileSize > gateway.MaxAttachment {
		return nil, tooLarge(label, f.FileSize), nil
	}
	data, note, err := c.download(ctx, c.bot.FileDownloadLink(f), label)
	if err != nil || note != "" {
		return nil, note, err
	}
	if name == "" {
		name = path.Base(f.FilePath)
	}
	if mimeType == "" {
		mimeType = http.DetectContentType(data)
	}
	return &gateway.Attachment{Name: name, MIME: mimeType, Data: data}, "", nil
}

func (c *Channel) download(ctx context.Context, link, label string) ([]byte, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return nil, "", fmt.Errorf("%s", c.redact(fmt.Sprintf("telegram: download: %v", err)))
	}
	resp, err := c.poll.Do(req)
	if err != nil {
		return nil, "", &gateway.RetryError{Err: fmt.Errorf("%s", c.redact(fmt.Sprintf("telegram: download: %v", err)))}
	}
	defer func() { _ = resp.Body.Close() }()
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return nil, "", &gateway.RetryError{Err: fmt.Errorf("telegram: download of %s: %s", label, resp.Status)}
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Sprintf("[%s was left out: Telegram answered %s to its download]", label, resp.Status), nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, gateway.MaxAttachment+1))
	if err != nil {
		return nil, "", &gateway.RetryError{Err: fmt.Errorf("telegram: download of %s: %w", label, err)}
	}
	if len(data) > gateway.MaxAttachment {
		return nil, tooLarge(label, int64(len(data))), nil
	}
	return data, "", nil
}

func tooLarge(label string, size int64) string {
	return fmt.Sprintf("[%s (%s) was left out: files over %d MB are not fetched]",
		label, humanSize(size), gateway.MaxAttachment>>20)
}

func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<20)), ".0") + " MB"
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
