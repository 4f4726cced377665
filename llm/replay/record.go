package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"sync"
	"time"

	"github.com/reinhq/rein/llm"
)

var (
	_ llm.Provider      = (*Recorder)(nil)
	_ llm.AuthValidator = (*Recorder)(nil)
)

// RecorderOptions configures a [Recorder]. The zero value means the defaults.
type RecorderOptions struct {
	// Provider and Model go into the cassette's header. When empty they are
	// taken from the first interaction: the provider stamped on its reply (or
	// named by its error) and its request's model.
	Provider, Model string
	// UserConfig goes into the header: the run being recorded loaded the
	// user's configuration (see [Header.UserConfig]).
	UserConfig bool
	// Now stamps the header's creation time; nil uses time.Now.
	Now func() time.Time
}

// Recorder is an [llm.Provider] that passes every call to another provider
// and appends each exchange to a cassette. It is safe for concurrent use:
// each stream is written as one line when it ends, and lines never
// interleave.
//
// Streams pass through unchanged, each delta yielded as it arrives. The
// interaction is written when the stream ends — just before its last value
// (Done or the error) is yielded — or, when the caller stops reading early,
// with the deltas read so far and a cancelled error. A failure to write the
// cassette does not disturb the stream: it is kept and returned by
// [Recorder.Close] and [Recorder.Err], and nothing more is recorded.
type Recorder struct {
	inner llm.Provider
	opts  RecorderOptions

	mu     sync.Mutex
	w      io.Writer
	file   *os.File // set by Create: closed by Close
	header bool     // the header line was written
	n      int      // interactions written
	err    error    // the first write failure; sticky
	closed bool
}

// stoppedMessage is the error recorded for a stream the caller stopped
// reading before it ended.
const stoppedMessage = "recording: the caller stopped reading the stream"

// NewRecorder returns a recorder that passes calls to inner and writes the
// cassette to w. If w has a Sync method (an *os.File), it is called after
// every line. Close flushes the header of an empty cassette and syncs; it
// does not close w.
func NewRecorder(inner llm.Provider, w io.Writer, opts RecorderOptions) *Recorder {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Recorder{inner: inner, opts: opts, w: w}
}

// Create returns a recorder writing a new cassette at path, replacing any
// file there. Every line is synced to disk as it is written, so a crash loses
// at most the line being written (see [Parse] for how that torn line is
// read). Close closes the file.
func Create(inner llm.Provider, path string, opts RecorderOptions) (*Recorder, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("replay: create cassette: %w", err)
	}
	r := NewRecorder(inner, f, opts)
	r.file = f
	return r, nil
}

// Stream passes req to the inner provider and records the exchange. A request
// that cannot be put in canonical form (a nil or unknown block) fails at once
// with a bad_request [*llm.Error] and is not sent.
func (r *Recorder) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	return func(yield func(llm.Delta, error) bool) {
		canon, err := Canonical(req)
		if err != nil {
			yield(llm.Delta{}, &llm.Error{Kind: llm.KindBadRequest, Provider: providerName, Message: err.Error(), Err: err})
			return
		}
		it := Interaction{RequestHash: Hash(canon), Request: canon, Deltas: []RecordedDelta{}}
		ended := false
		defer func() {
			if !ended {
				it.Error = &RecordedError{Kind: llm.KindCancelled.String(), Message: stoppedMessage}
				r.write(&it, req.Model)
			}
		}()
		for d, err := range r.inner.Stream(ctx, req) {
			if err != nil {
				it.Error, ended = recordError(err), true
				r.write(&it, req.Model)
				yield(llm.Delta{}, err)
				return
			}
			if d.Kind == llm.DeltaDone {
				if d.Response != nil {
					it.Response = recordResponse(d.Response)
				}
				ended = true
				r.write(&it, req.Model)
				yield(d, nil)
				return
			}
			if rd, ok := recordDelta(d); ok {
				it.Deltas = append(it.Deltas, rd)
			}
			if !yield(d, nil) {
				return
			}
		}
		ended = true
		r.write(&it, req.Model)
	}
}

// write appends one interaction line, preceded by the header line if it is
// the first.
func (r *Recorder) write(it *Interaction, model string) {
	line, err := encodeLine(it)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return
	}
	if r.closed {
		r.err = errors.New("replay: recorder used after Close")
		return
	}
	if err != nil {
		r.err = fmt.Errorf("replay: encode interaction %d: %w", r.n+1, err)
		return
	}
	if !r.header {
		if err := r.writeHeader(it, model); err != nil {
			r.err = err
			return
		}
	}
	if err := r.writeLine(line); err != nil {
		r.err = fmt.Errorf("replay: write interaction %d: %w", r.n+1, err)
		return
	}
	r.n++
}

// writeHeader writes the header line, filling what the options left empty
// from the first interaction (nil for an empty cassette).
func (r *Recorder) writeHeader(first *Interaction, model string) error {
	h := Header{Version: Version, Created: r.opts.Now().UTC().Truncate(time.Second),
		Provider: r.opts.Provider, Model: r.opts.Model, UserConfig: r.opts.UserConfig}
	if first != nil {
		if h.Model == "" {
			h.Model = model
		}
		switch {
		case h.Provider != "":
		case first.Response != nil:
			h.Provider = first.Response.Message.Provider
		case first.Error != nil:
			h.Provider = first.Error.Provider
		}
	}
	line, err := encodeLine(h)
	if err == nil {
		err = r.writeLine(line)
	}
	if err != nil {
		return fmt.Errorf("replay: write header: %w", err)
	}
	r.header = true
	return nil
}

func (r *Recorder) writeLine(line []byte) error {
	if _, err := r.w.Write(line); err != nil {
		return err
	}
	if s, ok := r.w.(interface{ Sync() error }); ok {
		return s.Sync()
	}
	return nil
}

// Len returns the number of interactions written so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// Err returns the first failure to write the cassette, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Close finishes the cassette: it writes the header if no interaction was
// recorded (an empty cassette is still a valid one), syncs, and closes the
// file of a recorder made by [Create]. It returns the first failure of the
// recording. Streams that end after Close pass through unrecorded, and Err
// reports it. Close may be called more than once.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return r.err
	}
	r.closed = true
	if !r.header && r.err == nil {
		r.err = r.writeHeader(nil, "")
	}
	if r.file != nil {
		if err := r.file.Close(); err != nil && r.err == nil {
			r.err = fmt.Errorf("replay: close cassette: %w", err)
		}
	}
	return r.err
}

// ValidateAuth asks the inner provider, when it can check its credentials
// ([llm.AuthValidator]); otherwise it succeeds.
func (r *Recorder) ValidateAuth(ctx context.Context) error {
	if v, ok := r.inner.(llm.AuthValidator); ok {
		return v.ValidateAuth(ctx)
	}
	return nil
}
