// Package root is the `yarn-er` command: the global flags, the settings and every command below it.
package root

import (
	"bytes"
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/am"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/app"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/cluster"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/discover"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/doctor"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/exec"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/exitcodes"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/preflight"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/serve"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/submit"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/tokens"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/translate"
	"github.com/yarn-er/yarn-er/cmd/internal/commands/version"
	servelib "github.com/yarn-er/yarn-er/serve"
)

// NewCmdRoot returns the yarn-er command with every subcommand, sharing f.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	root := cmdutil.NewGroupCommand("yarn-er", "Run GPU and FPGA jobs on Hadoop YARN the way Flink's external resources intend",
		`yarn-er makes Flink's external resources (GPUs, FPGAs, any custom YARN resource type) work on
Hadoop YARN 3.1+. It translates Flink's configuration into the container YARN will be asked for,
checks a cluster before a job is submitted, inspects the cluster, and discovers devices inside
containers without handing one device to two processes.`)
	root.Version = version.String(f.Build)
	root.SilenceUsage, root.SilenceErrors = true, true
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		return f.ApplySettings(cmd)
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdutil.UsageError{Err: err} })
	f.AddGlobalFlags(root)

	// Each command lives in a package of its own under cmd/internal/commands; register it here.
	root.AddCommand(
		translate.NewCmdTranslate(f, nil),
		preflight.NewCmdPreflight(f, nil),
		cluster.NewCmdCluster(f),
		discover.NewCmdDiscover(f, nil),
		exec.NewCmdExec(f, nil),
		submit.NewCmdSubmit(f, nil),
		app.NewCmdApp(f),
		doctor.NewCmdDoctor(f, nil),
		am.NewCmdAM(f, nil),
		tokens.NewCmdTokens(f, nil),
		version.NewCmdVersion(f, nil),
		exitcodes.NewCmdExitCodes(),
		serve.NewCmdServe(f, nil, func(ctx context.Context, args []string) servelib.CommandResult { return runInProcess(ctx, f, args) }),
	)
	root.SuggestionsMinimumDistance = 2
	cmdutil.MarkArgErrorsAsUsage(root)
	return root
}

// runInProcess runs yarn-er with args in this process, on buffers and f's environment, as
// cmd/yarn-er's Main does: serve's POST endpoints answer with the CLI's own commands.
func runInProcess(ctx context.Context, f *cmdutil.Factory, args []string) servelib.CommandResult {
	var out, errOut bytes.Buffer
	sub := cmdutil.New(&cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, f.Env)
	sub.Build = f.Build
	cmd := NewCmdRoot(sub)
	cmd.SetArgs(args)
	cmd.SetIn(sub.IO.In)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	code := cmdutil.ExitOK
	if err := cmd.ExecuteContext(ctx); err != nil {
		code = sub.ReportError(cmd, args, err)
	}
	return servelib.CommandResult{Stdout: out.Bytes(), Stderr: errOut.String(), ExitCode: code}
}
