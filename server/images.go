package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/attachment"
	"github.com/reinhq/rein/llm"
)

// messageBodyBytes bounds the body of a message: the base64 of the most
// image bytes one message may carry, plus the server's bound for the rest.
func (s *Server) messageBodyBytes() int64 {
	return int64(attachment.DefaultLimits.MaxEncodedBytes()) + s.cfg.MaxBodyBytes
}

// decodeImages decodes and checks a message's images (package attachment)
// and answers a bad one with its problem: too large (one, or all
// together) 413, a type that is no accepted image 415, a declared type
// that lies, bad base64 or too many 422 — each naming the image
// (body.images[i]) and how to fix it.
func decodeImages(in []api.Image) ([]llm.Image, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]llm.Image, 0, len(in))
	for i, img := range in {
		loc := fmt.Sprintf("body.images[%d]", i)
		got, err := attachment.Decode(loc, img.Data, img.MediaType, attachment.DefaultLimits)
		if err != nil {
			return nil, imageProblem(loc, err)
		}
		out = append(out, got)
	}
	if err := attachment.CheckSet(out, attachment.DefaultLimits); err != nil {
		return nil, imageProblem("body.images", err)
	}
	return out, nil
}

// imageProblem maps an attachment error to its status.
func imageProblem(loc string, err error) error {
	detail := err.Error()
	switch {
	case errors.Is(err, attachment.ErrTooLarge):
		return huma.NewError(http.StatusRequestEntityTooLarge, detail, &huma.ErrorDetail{Location: loc, Message: detail})
	case errors.Is(err, attachment.ErrUnsupported):
		return huma.NewError(http.StatusUnsupportedMediaType, detail, &huma.ErrorDetail{Location: loc, Message: detail})
	}
	return invalid(loc, nil, detail)
}
