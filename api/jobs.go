package api

import "time"

// Job is one background job of a session (SPEC TOOL-8): a command the
// model started with run_in_background, or one moved to the background
// at its timeout.
type Job struct {
	ID          string    `json:"id" doc:"The job's id in its session: 1, 2, …"`
	Command     string    `json:"command" doc:"The command line."`
	Description string    `json:"description,omitempty" doc:"What the model said it does."`
	State       string    `json:"state" enum:"running,exited,killed,stopped,failed" doc:"running; exited on its own (see exit_code); killed by job_kill; stopped (its session was deleted, the server shut down, or its output passed the limit); failed (could not be run)."`
	ExitCode    *int      `json:"exit_code,omitempty" doc:"The exit code once it ended (128+signal when killed)."`
	Started     time.Time `json:"started"`
	Ended       time.Time `json:"ended,omitzero"`
	OutputBytes int64     `json:"output_bytes" doc:"Bytes of output it wrote."`
	Error       string    `json:"error,omitempty" doc:"Why it could not run, or what stopped it."`
}

// JobList is the body of GET /sessions/{id}/jobs, oldest first.
type JobList struct {
	Items []Job `json:"items"`
	// HeldByWorker says this process cannot list the jobs: it only
	// enqueues runs (split mode) and the worker whose run started a job
	// holds it.
	HeldByWorker bool `json:"held_by_worker,omitempty" doc:"true when this server only enqueues runs for rein worker processes (split mode): each job is held by the worker whose run started it, which this API process cannot list, so items is empty though jobs may run. A later run of the session taken by that worker reaches them; one taken by another worker does not."`
}
