// Command yarn-er makes Flink's external resources (GPUs, FPGAs and any custom resource type) work on
// Hadoop YARN: it translates Flink's configuration into the YARN container request, checks a cluster
// before a job is submitted, inspects the cluster, and discovers devices inside containers.
//
// The commands live in cmd/internal/commands/<name>, what they share in cmd/internal/cmdutil; this package only
// starts them.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/discover"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/root"
)

// Build information, set with -ldflags "-X main.version=... -X main.commit=... -X main.date=...".
var (
	version = ""
	commit  = ""
	date    = ""
)

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, stop := cmdutil.WatchSignals(context.Background(), sigs, cmdutil.SignalGrace, os.Exit, os.Stderr)
	args := os.Args[1:]
	if discover.IsArgv0(os.Args[0]) {
		// Started as Flink's discovery script (a symlink named nvidia-gpu-discovery.sh or
		// yarn-er-discover): behave exactly like `yarn-er discover`.
		args = append([]string{"discover"}, args...)
	}
	streams := &cmdutil.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	code := Main(ctx, args, streams, cmdutil.NewEnv(os.Environ()))
	stop()
	os.Exit(code)
}

// Main runs yarn-er with args on streams and env and returns the process exit code.
func Main(ctx context.Context, args []string, streams *cmdutil.IOStreams, env cmdutil.Env) int {
	f := cmdutil.New(streams, env)
	f.Build = cmdutil.BuildStamp{Version: version, Commit: commit, Date: date}
	cmd := root.NewCmdRoot(f)
	cmd.SetArgs(args)
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return cmdutil.ExitOK
	}
	if sig := cmdutil.SignalCause(ctx); sig != nil && !cmdutil.SignalHandled(ctx) {
		// Ended by SIGINT or SIGTERM: say so, and exit 130 or 143, whatever the command made of
		// its cancelled context (unless it handled the signal itself: submit's prompt).
		err = sig
	}
	return f.ReportError(cmd, args, err)
}
