package session

// Background jobs after a crash (SPEC TOOL-8, SESS-1). A job's process
// group is journaled like any command's, with the job's id
// ([ToolProcess].Job); its call has its result at once, so healing has
// nothing to say about it. But when the process that ran the session
// dies, a job it started on the host may run on (under bubblewrap the
// sandbox dies with rein): [Load] lists each journaled job whose group
// still runs in State.Pending, Alive and with its Job, so it is reported
// and [StopPending] stops it like any orphan.

// job notes a journaled background job.
func (r *replay) job(e Entry) {
	tp := e.ToolProcess
	r.jobs = append(r.jobs, PendingCall{CallID: tp.CallID, Tool: "bash", RunID: e.RunID, Seq: e.Seq,
		StartedAt: e.Time, PGID: tp.PGID, Start: tp.Start, Job: tp.Job})
}

// liveJobs returns the journaled jobs whose process group still runs,
// leaving out a call still pending on its own (a command moved to the
// background just before a crash cut its result off: reported once, as
// that call).
func (r *replay) liveJobs() []PendingCall {
	var out []PendingCall
	for _, j := range r.jobs {
		if _, open := r.open[j.CallID]; open {
			continue
		}
		if j.PGID > 0 && groupAlive(j.PGID, j.Start) {
			j.Alive = true
			out = append(out, j)
		}
	}
	return out
}
