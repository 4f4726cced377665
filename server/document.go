package server

import (
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"
)

// completeDocument finishes the OpenAPI document once every operation is
// registered (SPEC API-1): it declares the statuses the layers around the
// handlers answer, which huma cannot see, and the local caller of a
// server without authentication.
//
//   - An operation with a body may answer 400 (the body is no JSON, or is
//     missing), 413 (over the body limit), 415 (not JSON) and 422.
//   - One with parameters may answer 422 (huma declares it only for path
//     parameters and bodies; a query parameter out of its bounds is 422 too).
//   - One that needs a caller reads the store, and answers 503 with
//     Retry-After when the store or the bus does not answer (fail); /ready
//     answers 503 when a dependency does not.
//   - Without authentication (Auth.Configured false) a loopback client is
//     the local caller with no credentials at all: the operations that need a
//     caller offer an empty security requirement besides bearer, so clients
//     generated from the document send none (remote clients are refused).
func (s *Server) completeDocument() {
	local := !s.auth.auth.Configured()
	for _, item := range s.api.OpenAPI().Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			if op.RequestBody != nil {
				declare(op, http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity)
			}
			if len(op.Parameters) > 0 {
				declare(op, http.StatusUnprocessableEntity)
			}
			if len(op.Security) > 0 || op.OperationID == "ready" {
				declare(op, http.StatusServiceUnavailable)
			}
			if local && len(op.Security) > 0 {
				op.Security = append(op.Security, map[string][]string{})
			}
		}
	}
	if local {
		if sc := s.api.OpenAPI().Components.SecuritySchemes[securityScheme]; sc != nil {
			sc.Description += " This server has no authentication configured: it serves loopback clients only, each as the " +
				"local caller, with no credentials (the empty security requirement); any other client is refused (401)."
		}
	}
}

// declare adds the problem responses of statuses to op where it has none,
// each like the op's 429 (every operation declares 429).
func declare(op *huma.Operation, statuses ...int) {
	like := op.Responses[strconv.Itoa(http.StatusTooManyRequests)]
	for _, st := range statuses {
		key := strconv.Itoa(st)
		if _, ok := op.Responses[key]; ok || like == nil {
			continue
		}
		op.Responses[key] = &huma.Response{Description: http.StatusText(st), Content: like.Content}
	}
}
