package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/registry"
)

// version is set at build time: -ldflags "-X github.com/reinhq/rein/cli.version=v1.2.3".
var version = ""

// Version returns rein's version: the one set at build time, else the
// module version the binary was built from, else "dev".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func versionLine() string {
	return fmt.Sprintf("rein %s (%s, %s/%s)", Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// App is the CLI's world. Main fills it from the process; tests fill it
// themselves and call [App.Run].
type App struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads the environment.
	Getenv func(string) string
	// Dir is the directory rein was started in (absolute).
	Dir string
	// StdinTTY, StdoutTTY and StderrTTY say which streams are terminals.
	StdinTTY, StdoutTTY, StderrTTY bool
	// Models, when set, is asked first for the provider of a model string;
	// ok false leaves the model to the registry. Tests and the example
	// recorder plug scripted models in here.
	Models func(model string) (m Model, ok bool, err error)
	// Interactive runs the terminal UI; nil means tui.Run.
	Interactive func(ctx context.Context, opts tui.Options) error
	// Now is the clock of runs; nil means time.Now. Tests fix it.
	Now func() time.Time

	server string // rein sessions --server
}

// Model is a model ready to call.
type Model struct {
	Provider llm.Provider
	// ProviderName is the name the provider stamps on its replies; Name the
	// model's name as the provider knows it.
	ProviderName, Name string
	// Caps is what the registry knows of the model.
	Caps registry.Model
}

// Main runs rein with the process's arguments and streams and returns the
// exit code.
func Main(args []string) int { return MainEnv(args, os.Getenv) }

// MainEnv is Main with the environment read through getenv: cmd/rein
// passes the snapshot it took before the provider keys left the process
// environment (see internal/secretenv).
func MainEnv(args []string, getenv func(string) string) int {
	if len(args) == 1 && (args[0] == "--version" || args[0] == "version") {
		fmt.Println(versionLine()) // the fast path: nothing else is built
		return ExitOK
	}
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(os.Stderr, "rein: cannot tell the working directory: %v\n", err)
		return ExitError
	}
	a := &App{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: getenv, Dir: dir,
		StdinTTY: term.IsTerminal(int(os.Stdin.Fd())), StdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		StderrTTY: term.IsTerminal(int(os.Stderr.Fd()))}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C ends the process at once
	}()
	return a.Run(ctx, args)
}

// stopSignals cancel the run: Ctrl-C, kill, and the terminal closing
// (SIGHUP). The run ends cancelled, its tools get results, and the session
// records it; a second one ends the process at once.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// Run runs one command line and returns the exit code. Errors are printed
// on stderr.
func (a *App) Run(ctx context.Context, args []string) int {
	root := a.commandFor(args)
	root.SetArgs(args)
	root.SetIn(a.Stdin)
	root.SetOut(a.Stdout)
	root.SetErr(a.Stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintf(a.Stderr, "rein: %s\n", ee.msg)
		}
		return ee.code
	}
	// Anything else comes from parsing the command line.
	fmt.Fprintf(a.Stderr, "rein: %v\nRun '%s --help' for usage.\n", err, cmd.CommandPath())
	return ExitUsage
}

// commandFor builds the command tree args need: for "rein run …", the
// root and run alone (CLI-1: the ~20 other commands and their flags are
// not built at every one-shot run); else every command, which help,
// completion and a mistyped command's suggestions list.
func (a *App) commandFor(args []string) *cobra.Command {
	if len(args) > 0 && args[0] == "run" {
		return a.newRoot(a.runCommand())
	}
	return a.rootCommand()
}

// rootCommand builds the command tree.
func (a *App) rootCommand() *cobra.Command {
	return a.newRoot(a.runCommand(), a.versionCommand(), a.providerCommand(), a.sessionsCommand(),
		a.configCommand(), a.initCommand(), a.doctorCommand(), a.trustCommand(), a.serveCommand(),
		a.agentsCommand(), a.skillsCommand(), a.mcpCommand(), a.kbCommand(), a.memoryCommand(), a.mirrorCommand(), a.workerCommand(), a.personaCommand(), a.gatewayCommand(),
		a.acpCommand())
}

// newRoot builds the root command with the given subcommands.
func (a *App) newRoot(sub ...*cobra.Command) *cobra.Command {
	opts := &runOptions{}
	root := &cobra.Command{
		Use:   "rein",
		Short: "rein is an agent harness: it runs a model with tools in your workspace",
		Long: `rein runs a model with tools in your workspace.

On a terminal, rein alone opens an interactive session. With a prompt on
stdin (echo "…" | rein) it runs once, like rein run -.

Configuration layers, highest first: flags, REIN_* variables, the workspace's
.rein/settings.yaml, ~/.config/rein/settings.yaml, defaults (rein config show).
A workspace's allow rules, sensitive-file exceptions and hooks apply only once
you trusted it (rein trust); rein asks at start, rein run warns and goes on.
Keys come from the vendors' variables: ANTHROPIC_API_KEY, OPENAI_API_KEY,
GEMINI_API_KEY (and their *_BASE_URL). REIN_LOG=debug logs more.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown command %q; to run a prompt once: rein run %q", args[0], strings.Join(args, " "))
			}
			return nil
		},
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if v, _ := cmd.Flags().GetBool("version"); v {
				fmt.Fprintln(a.Stdout, versionLine())
				return nil
			}
			return a.interactive(cmd, opts)
		},
	}
	// Our own --version rather than cobra's Version field: cobra prints that
	// through a text/template once its template is changed, and a reachable
	// text/template makes the linker keep every method of every type
	// (internal/arch TestMethodsPruned).
	root.Flags().Bool("version", false, "print rein's version")
	root.CompletionOptions.HiddenDefaultCmd = true
	addRunFlags(root, opts)
	root.AddCommand(sub...)
	return root
}

func (a *App) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print rein's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(a.Stdout, versionLine())
			return nil
		},
	}
}

// getenv reads the app's environment.
func (a *App) getenv(k string) string {
	if a.Getenv == nil {
		return ""
	}
	return a.Getenv(k)
}

// abs resolves p against the directory rein was started in.
func (a *App) abs(p string) string {
	if p == "" {
		return a.Dir
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(a.Dir, p)
}

// noColor reports whether output must be plain: NO_COLOR is set or the
// stream is not a terminal (SPEC CLI-4).
func (a *App) noColor(tty bool) bool {
	return !tty || a.getenv("NO_COLOR") != "" || a.getenv("TERM") == "dumb"
}
