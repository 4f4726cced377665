package cli

import (
	"github.com/spf13/cobra"
)

const workerLong = `Run the runs of a split deployment (SPEC API-5): API processes
(rein serve --mode api) store each posted message as a queued run in
PostgreSQL and enqueue its session on Redis; workers take sessions from the
queue, one worker per session at a time, and run their queued runs in order,
writing events to PostgreSQL and Redis, where every API process's SSE clients
read them. Start as many as the load needs, on any host that reaches both:

  rein serve --mode api --database-url postgres://… --redis-url redis://… &
  rein worker --database-url postgres://… --redis-url redis://…

A worker holds a session with a lease it renews; when a worker dies, another
takes the session after the lease's TTL (30 s), marks the cut-off run
interrupted, heals the session and runs what is still queued. A worker whose
lease ran out can no longer write to the session: PostgreSQL refuses its
fencing token. With Redis away, workers pause and take again once it is back;
with PostgreSQL away, the run in progress fails and its session is taken up
again later. On SIGTERM a worker stops taking sessions and lets its runs
finish for --shutdown-timeout. --addr serves /health and /ready (the store
and the bus; 503 with Retry-After naming the one down) for a process manager.`

// workerCommand is rein worker: a process that runs runs and serves no HTTP.
func (a *App) workerCommand() *cobra.Command {
	o := &serveOptions{mode: modeWorker}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run the runs that rein serve --mode api processes enqueue (PostgreSQL + Redis)",
		Long:  workerLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serve(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "", "address to serve /health and /ready on (e.g. 127.0.0.1:7879), for probes; none by default")
	addStoreFlags(f, o)
	addRunnerFlags(f, o)
	return cmd
}
