package exec

// StreamKeep is how many bytes of a streamed command's output Run keeps
// at its start (Output.Combined) and at its end (Output.Tail): enough for
// the sandbox to read a failure and explain what it refused (SPEC TOOL-7).
const StreamKeep = 64 << 10

// Streaming a command's output (SPEC TOOL-8). A Command with Stream set
// runs through the backend's Run like any other — the same sandbox, the
// same process group of its own, the same kill on a cancelled context or
// a timeout — but its output goes to the writer as it is written instead
// of being collected: the caller keeps it (a background job's ring buffer
// and file); Run keeps StreamKeep bytes of each end, and no spill file.
// Run still counts the bytes and stops the command past
// MaxOutput (Output.OutputLimited), so a writer that keeps only a bounded
// part never lets a flood run forever. A caller that wants the command to
// run on while it does other things calls Run from a goroutine of its
// own and cancels the context to stop it; OnStart gives it the process
// group at once.

// streamOut hands p to the stream. Output the stream cannot take (it
// returned an error) is dropped: it is the stream's to keep, and the
// command is never blocked on it; the bytes past the limit are not
// handed on, as a spill file would not keep them either.
func (c *capture) streamOut(p []byte) {
	if c.maxSpill > 0 {
		room := c.maxSpill - (c.total - int64(len(p)))
		if room <= 0 {
			return
		}
		if int64(len(p)) > room {
			p = p[:room]
		}
	}
	_, _ = c.stream.Write(p)
}
