package telegramfake

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// maxRequest is the largest request the fake reads (Telegram takes
// uploads of up to 50 MB).
const maxRequest = 50 << 20

// upload is a file part of a multipart request.
type upload struct {
	name string
	data []byte
}

// params are a Bot API call's parameters. Telegram takes them in the
// query string, as application/x-www-form-urlencoded, as application/json
// or as multipart/form-data (files must come as multipart); values that
// are objects (reply_markup) are JSON text in every form.
type params struct {
	values map[string]string
	files  map[string]upload
}

func (p params) get(k string) string { return p.values[k] }

func (p params) has(k string) bool { _, ok := p.values[k]; return ok }

func readParams(w http.ResponseWriter, r *http.Request) (params, error) {
	p := params{values: map[string]string{}, files: map[string]upload{}}
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			p.values[k] = v[0]
		}
	}
	if r.Body == nil {
		return p, nil
	}
	body := http.MaxBytesReader(w, r.Body, maxRequest)
	ct, ctParams, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var obj map[string]json.RawMessage
		data, err := io.ReadAll(body)
		if err != nil {
			return p, err
		}
		if len(strings.TrimSpace(string(data))) == 0 {
			return p, nil
		}
		if err := json.Unmarshal(data, &obj); err != nil {
			return p, err
		}
		for k, raw := range obj {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				p.values[k] = s
			} else {
				p.values[k] = string(raw)
			}
		}
	case "application/x-www-form-urlencoded":
		data, err := io.ReadAll(body)
		if err != nil {
			return p, err
		}
		vals, err := url.ParseQuery(string(data))
		if err != nil {
			return p, err
		}
		for k, v := range vals {
			if len(v) > 0 {
				p.values[k] = v[0]
			}
		}
	case "multipart/form-data":
		if ctParams["boundary"] == "" {
			return p, errors.New("multipart without boundary")
		}
		r.Body = body
		if err := r.ParseMultipartForm(maxRequest); err != nil {
			return p, err
		}
		for k, v := range r.MultipartForm.Value {
			if len(v) > 0 {
				p.values[k] = v[0]
			}
		}
		for k, fhs := range r.MultipartForm.File {
			if len(fhs) == 0 {
				continue
			}
			f, err := fhs[0].Open()
			if err != nil {
				return p, err
			}
			data, err := io.ReadAll(f)
			_ = f.Close()
			if err != nil {
				return p, err
			}
			p.files[k] = upload{name: fhs[0].Filename, data: data}
		}
	}
	return p, nil
}
