// Command yarn-er-am is yarn-er's ApplicationMaster as a binary of its own: `yarn-er-am am` does
// exactly what `yarn-er am` does (package cmd/internal/amrun), linked without the rest of the CLI, so
// that the AM container holds a fraction of yarn-er's memory. yarn-er submit stages it beside the
// yarn-er binary when it finds one of the same build next to that binary (or --am-binary names
// one), and starts the AM container with it; the containers of the application itself still run
// the full yarn-er (its exec and discovery).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/yarn-er/yarn-er/cmd/internal/amrun"
	"github.com/yarn-er/yarn-er/internal/redact"
)

// version is set with -ldflags "-X main.version=...", as yarn-er's own.
var version = ""

func main() {
	ctx, stop := watchSignals()
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	var sig signalled
	if code == amrun.ExitKilled && errors.As(context.Cause(ctx), &sig) {
		code = sig.code
	}
	os.Exit(code)
}

// usage is the text of a wrong command line.
const usage = `usage: yarn-er-am am        (the ApplicationMaster of yarn-er submit; runs inside YARN)
       yarn-er-am version
`

// run runs the command line args and returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 1 && args[0] == "am":
	case len(args) == 1 && (args[0] == "version" || args[0] == "--version"):
		fmt.Fprintln(stdout, "yarn-er-am", versionString())
		return amrun.ExitOK
	case len(args) == 1 && (args[0] == "help" || args[0] == "--help" || args[0] == "-h"):
		fmt.Fprint(stdout, usage)
		return amrun.ExitOK
	default:
		fmt.Fprint(stderr, usage)
		return 2
	}
	err := amrun.Run(ctx, amrun.Config{Getenv: getenv, Stderr: stderr})
	code := amrun.ExitCode(err)
	switch {
	case code == amrun.ExitKilled:
		fmt.Fprintln(stderr, "yarn-er: stopped by a signal before the application ended")
	case err != nil:
		fmt.Fprintf(stderr, "yarn-er: %s\n", redact.Text(err.Error()))
	}
	return code
}

// versionString is the -ldflags version, else the module's, else "devel".
func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// signalled is the cause of a context that a signal ended; code is 128 + its number.
type signalled struct{ code int }

func (s signalled) Error() string { return fmt.Sprintf("signal (exit %d)", s.code) }

// watchSignals returns a context that SIGINT or SIGTERM cancels with a signalled cause (the AM
// then removes the staging directory on its last attempt and stops); stop ends the watch.
func watchSignals() (ctx context.Context, stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		if s, ok := <-sigs; ok {
			n, _ := s.(syscall.Signal)
			cancel(signalled{code: 128 + int(n)})
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(sigs)
		cancel(nil)
	}
}
