package discord

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/reinhq/rein/gateway"
)

// inbound turns a user's message into the gateway's, fetching its images;
// other files, and images too large or unreachable, are named in Text.
func (c *Channel) inbound(ctx context.Context, m *discordgo.Message) gateway.Inbound {
	in := gateway.Inbound{
		ChatID:   m.ChannelID,
		UserID:   m.Author.ID,
		UserName: displayName(m.Author),
		ID:       m.ID,
		Text:     m.Content,
	}
	var notes []string
	for _, a := range m.Attachments {
		if a == nil {
			continue
		}
		typ := attachmentType(a)
		switch {
		case !strings.HasPrefix(typ, "image/"):
			notes = append(notes, fmt.Sprintf("[file %q (%s) not fetched: only images are]", a.Filename, typ))
		case a.Size > gateway.MaxAttachment:
			notes = append(notes, fmt.Sprintf("[image %q left out: %d bytes, over the %d limit]", a.Filename, a.Size, gateway.MaxAttachment))
		default:
			data, err := c.download(ctx, a.URL)
			if err != nil {
				notes = append(notes, fmt.Sprintf("[image %q left out: %v]", a.Filename, err))
				continue
			}
			in.Attachments = append(in.Attachments, gateway.Attachment{Name: a.Filename, MIME: typ, Data: data})
		}
	}
	if len(notes) > 0 {
		in.Text = strings.TrimSpace(in.Text + "\n" + strings.Join(notes, "\n"))
	}
	return in
}

// attachmentType is a's media type, from Discord or else its name.
func attachmentType(a *discordgo.MessageAttachment) string {
	if t, _, err := mime.ParseMediaType(a.ContentType); err == nil && t != "" {
		return t
	}
	if t, _, err := mime.ParseMediaType(mime.TypeByExtension(path.Ext(a.Filename))); err == nil && t != "" {
		return t
	}
	return "application/octet-stream"
}

// download fetches an attachment's URL (Discord's CDN; no token is sent),
// refusing more than [gateway.MaxAttachment] bytes.
func (c *Channel) download(ctx context.Context, raw string) ([]byte, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("not an http(s) URL")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch failed")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch answered %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, gateway.MaxAttachment+1))
	if err != nil {
		return nil, fmt.Errorf("fetch failed")
	}
	if len(data) > gateway.MaxAttachment {
		return nil, fmt.Errorf("over the %d byte limit", gateway.MaxAttachment)
	}
	return data, nil
}
