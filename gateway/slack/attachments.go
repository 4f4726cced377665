package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	slackapi "github.com/slack-go/slack"

	"github.com/reinhq/rein/gateway"
)

// attachment fetches a file a user shared (url_private_download, else
// url_private, with the bot token as a Bearer: the files:read scope).
// Files over [gateway.MaxAttachment], or that Slack will not hand out,
// come back as a note for the text; err is set only for a failure worth
// a redelivery (429, 5xx, the network).
func (c *Channel) attachment(ctx context.Context, f slackapi.File) (*gateway.Attachment, string, error) {
	label := f.Name
	if label == "" {
		label = f.Title
	}
	if label == "" {
		label = "a file"
	}
	if f.Size > gateway.MaxAttachment {
		return nil, tooLarge(label, int64(f.Size)), nil
	}
	link := f.URLPrivateDownload
	if link == "" {
		link = f.URLPrivate
	}
	if link == "" || f.Mode == "tombstone" || f.Mode == "hidden_by_limit" {
		return nil, fmt.Sprintf("[%s was left out: Slack gives no download link for it]", label), nil
	}
	var buf capped
	if err := c.api.GetFileContext(ctx, link, &buf); err != nil {
		if errors.Is(err, errTooLarge) {
			return nil, tooLarge(label, int64(buf.n)), nil
		}
		err = c.classify(ctx, "file download", err)
		if _, retry := gateway.RetryAfter(err); retry || ctx.Err() != nil {
			return nil, "", err
		}
		return nil, fmt.Sprintf("[%s was left out: %v]", label, err), nil
	}
	mime := f.Mimetype
	if mime == "" {
		mime = http.DetectContentType(buf.b)
	}
	return &gateway.Attachment{Name: label, MIME: mime, Data: buf.b}, "", nil
}

func tooLarge(label string, size int64) string {
	return fmt.Sprintf("[%s was left out: %d bytes, more than the %d kept]", label, size, gateway.MaxAttachment)
}

var errTooLarge = errors.New("file larger than gateway.MaxAttachment")

// capped collects at most gateway.MaxAttachment bytes.
type capped struct {
	b []byte
	n int
}

func (c *capped) Write(p []byte) (int, error) {
	c.n += len(p)
	if c.n > gateway.MaxAttachment {
		return 0, errTooLarge
	}
	c.b = append(c.b, p...)
	return len(p), nil
}
