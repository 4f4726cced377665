package feishu

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"path"
	"strings"

	"github.com/reinhq/rein/gateway"
)

// Feishu's upload limits.
const (
	maxImage = 10 << 20 // bytes of an image (POST /im/v1/images)
	maxFile  = 30 << 20 // bytes of a file (POST /im/v1/files)
)

// imageTypes are the types Feishu takes as images; other files go up as
// files.
var imageTypes = map[string]bool{
	"image/jpeg": true, "image/png": true, "image/webp": true, "image/gif": true,
	"image/bmp": true, "image/tiff": true, "image/x-icon": true, "image/vnd.microsoft.icon": true,
}

// sendFile uploads f and posts it to chat as an image or file message;
// it returns the message's reference.
func (c *Channel) sendFile(ctx context.Context, chatID string, f gateway.Attachment, uuid string) (gateway.MessageRef, error) {
	if len(f.Data) == 0 {
		return gateway.MessageRef{}, fmt.Errorf("feishu: file %q is empty, which Feishu refuses", f.Name)
	}
	name := f.Name
	if name == "" {
		name = "file"
	}
	var msgType, content string
	if imageTypes[f.MIME] && len(f.Data) <= maxImage {
		var out struct {
			ImageKey string `json:"image_key"`
		}
		if err := c.upload(ctx, "upload image", "/open-apis/im/v1/images",
			map[string]string{"image_type": "message"}, "image", name, f.Data, &out); err != nil {
			return gateway.MessageRef{}, err
		}
		msgType, content = "image", mustJSON(map[string]string{"image_key": out.ImageKey})
	} else {
		if len(f.Data) > maxFile {
			return c.sendCard(ctx, gateway.Outgoing{ChatID: chatID,
				Text: fmt.Sprintf("(%s is larger than Feishu's %d MB and was not sent)", name, maxFile>>20)}, uuid)
		}
		var out struct {
			FileKey string `json:"file_key"`
		}
		if err := c.upload(ctx, "upload file", "/open-apis/im/v1/files",
			map[string]string{"file_type": fileType(name, f.MIME), "file_name": name}, "file", name, f.Data, &out); err != nil {
			return gateway.MessageRef{}, err
		}
		msgType, content = "file", mustJSON(map[string]string{"file_key": out.FileKey})
	}
	return c.sendMessage(ctx, chatID, msgType, content, uuid)
}

// upload posts a multipart form of fields and the file under field.
func (c *Channel) upload(ctx context.Context, op, apiPath string, fields map[string]string, field, name string, data []byte, out any) error {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		if err := mw.WriteField(k, v); err != nil {
			return fmt.Errorf("feishu: %s: %w", op, err)
		}
	}
	fw, err := mw.CreateFormFile(field, name)
	if err != nil {
		return fmt.Errorf("feishu: %s: %w", op, err)
	}
	fw.Write(data)
	if err := mw.Close(); err != nil {
		return fmt.Errorf("feishu: %s: %w", op, err)
	}
	return c.do(ctx, op, "POST", apiPath, mw.FormDataContentType(), b.Bytes(), out)
}

// fileType is the upload's file_type: pdf, doc, xls, ppt or, for the
// rest, stream (mp4 and opus want a duration the gateway does not know).
func fileType(name, mime string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".pdf":
		return "pdf"
	case ".doc", ".docx":
		return "doc"
	case ".xls", ".xlsx":
		return "xls"
	case ".ppt", ".pptx":
		return "ppt"
	}
	if mime == "application/pdf" {
		return "pdf"
	}
	return "stream"
}

func mustJSON(v any) string {
	b, _ := marshal(v)
	return string(b)
}
