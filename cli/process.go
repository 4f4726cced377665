package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/telemetry"
)

// process is the skeleton the long-running fronts share — rein serve,
// rein worker and rein gateway: a JSON logger, Prometheus metrics and
// OpenTelemetry tracing of every run, the runner's service, HTTP
// listeners, background loops, SIGTERM and SIGINT, and one shutdown order:
//
//  1. the service takes no new runs (a message posted now is refused with
//     "retry later"), and the front's loops stop;
//  2. listeners that only bring work in (the gateway's webhooks) close;
//  3. running runs may finish, until the shutdown timeout cancels them;
//     then what [process.afterRuns] registered runs (the gateway delivers
//     the replies of the runs that ended; rein serve's event streams
//     write the runs' last events and close, so their clients see the
//     ends);
//  4. the other listeners close;
//  5. tracing flushes; the stores, bus and queue close ([process.onClose]).
type process struct {
	logger  *slog.Logger
	metrics *telemetry.Metrics
	obs     *runner.Telemetry
	svc     *runner.Service

	stopTracing func(context.Context) error
	// sig ends on SIGTERM or SIGINT, or when a loop fails.
	sig  context.Context
	stop context.CancelFunc
	errc chan error
	// loops are the background loops, waited for in step 1.
	loops sync.WaitGroup
	// early close before the runs end, late after them.
	early, late []*http.Server
	// closers close the stores, bus and queue, last and in reverse.
	closers []func() error
	// drains run in step 3, once the runs ended.
	drains []func()
	isDown bool
}

// onClose has f run at the end of the shutdown, before the closers
// registered earlier: stores close after the runs that write to them.
func (p *process) onClose(f func() error) { p.closers = append(p.closers, f) }

// afterRuns has f run in step 3 of the shutdown, once the runs ended or
// were cancelled, before the late listeners and the stores close: f must
// return soon.
func (p *process) afterRuns(f func()) { p.drains = append(p.drains, f) }

// startProcess sets up the logging, metrics and tracing of a front named
// name ("serve", "worker", "gateway"), at log level level.
func (a *App) startProcess(ctx context.Context, level string, attrs ...any) (*process, error) {
	if _, err := telemetry.ParseLevel(level); err != nil {
		return nil, usageErrorf("--log-level: %v", err)
	}
	p := &process{logger: telemetry.NewLogger(a.Stderr, telemetry.LogOptions{JSON: true, Level: level}).With(attrs...),
		metrics: telemetry.NewMetrics(), errc: make(chan error, 8)}
	tp, stopTracing, err := telemetry.SetupTracing(ctx, a.getenv, "rein", Version())
	if err != nil {
		return nil, fail(ExitError, "tracing: %v", err)
	}
	p.stopTracing = stopTracing
	p.obs = runner.NewTelemetry(p.metrics, tp)
	p.sig, p.stop = signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	return p, nil
}

// service starts the runner's service of cfg, observed by the process's
// metrics and traces, and recovers the runs a previous process left.
func (p *process) service(ctx context.Context, cfg runner.ServiceConfig) (*runner.Service, error) {
	cfg.Observer, cfg.Logger = p.obs, p.logger
	svc, err := runner.NewService(cfg)
	if err != nil {
		return nil, fail(ExitError, "%v", err)
	}
	p.obs.Queued = svc.Queued
	if err := svc.Recover(ctx); err != nil {
		return nil, fail(ExitError, "%v", err)
	}
	p.svc = svc
	return svc, nil
}

// listen serves h on addr (what is wrong is said as flag); early says the
// listener only brings work in and closes before the runs end. It returns
// the address listened on.
func (p *process) listen(flag, addr string, h http.Handler, early bool, onShutdown ...func()) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fail(ExitError, "%s %s: %v", flag, addr, err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	for _, f := range onShutdown {
		hs.RegisterOnShutdown(f)
	}
	if early {
		p.early = append(p.early, hs)
	} else {
		p.late = append(p.late, hs)
	}
	go func() {
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			p.fail(fmt.Errorf("%s %s: %w", flag, ln.Addr(), err))
		}
	}()
	return ln.Addr(), nil
}

// loop runs f until the process stops: f must return soon after its
// context ends. An error ends the process.
func (p *process) loop(what string, f func(ctx context.Context) error) {
	p.loops.Go(func() {
		if err := f(p.sig); err != nil && !errors.Is(err, context.Canceled) {
			p.fail(fmt.Errorf("%s: %w", what, err))
		}
	})
}

// fail ends the process with err (the first failure is the one told).
func (p *process) fail(err error) {
	select {
	case p.errc <- err:
	default:
	}
}

// wait blocks until a signal or a failing loop or listener, then shuts
// down in the order the type's documentation gives, letting runs finish
// for at most timeout. A failure is the error returned.
func (p *process) wait(ctx context.Context, timeout time.Duration) error {
	var failed error
	select {
	case failed = <-p.errc:
	case <-p.sig.Done():
	}
	if err := p.down(ctx, timeout); failed == nil {
		failed = err
	}
	p.logger.Info("stopped")
	if failed != nil {
		return fail(ExitError, "%v", failed)
	}
	return nil
}

// close shuts down a process that did not get to wait (its start failed
// half-way), giving runs 5 s; after wait it does nothing.
func (p *process) close(ctx context.Context) {
	p.down(ctx, 5*time.Second)
}

// down shuts the process down, once, and returns a loop's failure on its
// way out.
func (p *process) down(ctx context.Context, timeout time.Duration) error {
	if p.isDown {
		return nil
	}
	p.isDown = true
	p.stop()
	if p.svc != nil {
		p.svc.Close() // before saying so: a message posted after the line below is refused
	}
	p.logger.Info("shutting down: no new runs; running runs may finish", "timeout", timeout.String())
	p.loops.Wait()
	var failed error
	select {
	case failed = <-p.errc:
	default:
	}
	p.shutdown(ctx, p.early)
	if p.svc != nil {
		down, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		if err := p.svc.Shutdown(down); err != nil {
			p.logger.Warn("running runs were cancelled at the shutdown deadline", "err", err)
		}
	}
	for _, f := range p.drains {
		f()
	}
	p.shutdown(ctx, p.late)
	if err := p.stopTracing(context.WithoutCancel(ctx)); err != nil {
		p.logger.Warn("tracing", "err", err)
	}
	for i := len(p.closers) - 1; i >= 0; i-- {
		if err := p.closers[i](); err != nil {
			p.logger.Warn("closing", "err", err)
		}
	}
	return failed
}

// shutdown closes servers, giving their requests 5 s.
func (p *process) shutdown(ctx context.Context, servers []*http.Server) {
	for _, hs := range servers {
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if err := hs.Shutdown(hctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			p.logger.Warn("http shutdown", "err", err)
		}
		cancel()
		hs.Close()
	}
}
