// Package jsonl is a crash-safe session store in plain files, the CLI's
// default (SPEC SESS-1).
//
// A store is a directory. Each session is three files:
//
//	<id>.jsonl      the log: one entry a line, as session.Entry encodes it
//	<id>.meta.json  the metadata: a session.Session, plus "seq_base", the
//	                highest seq the log ever held (kept across a Rewrite)
//	<id>.lock       the write lock (flock), holding the pid of its owner
//
// Metadata lives in its own small file so a run's totals can be updated
// without rewriting the log.
//
// Durability: Append encodes a batch of entries into one buffer, writes it
// with one write(2) and fsyncs the file before returning. Every other change
// (Create, Update, Fork, Rewrite) writes a temporary file, fsyncs it, renames
// (or, for a new session's metadata, links) it into place and fsyncs the
// directory; Delete removes the metadata first, so a session is whole or
// gone. Create's directory fsync runs on its own goroutine while the caller
// goes on: the session's next Append (which returns once both its own
// fsync and that one are done), Update, Rewrite, Delete or Release waits
// for it, so nothing written to a new session is reported durable before
// the session's names are. A crash at any instant
// therefore leaves each file either as it was or as it became; the only
// damage possible is a log's last line cut short or padded with NUL bytes by
// the file system. Reading drops such a line and reports it (a heal entry
// with Seq 0, see session.Store.Entries), never fails because of it; a
// corrupt line in the middle is reported and skipped the same way. The
// process that next writes the session cuts a torn last line or NUL padding
// first, and nothing else: a whole line that does not decode stays in the
// file. A log of which no line can be read is never written over: reading
// it and writing to it fail with session.ErrUnreadable naming the file. A
// batch cut by a crash may keep its first complete lines.
//
// Locking: one process at a time writes a session. The first write takes
// an exclusive flock on <id>.lock and keeps it until Release or Close (or
// the process dies, when the kernel drops it); another process then gets
// session.ErrLocked naming the pid that holds it. Call Acquire to take the
// lock up front. Reading never locks.
package jsonl
