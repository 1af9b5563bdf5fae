package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "yarn-er",
		Short: "Run GPU and FPGA jobs on Hadoop YARN the way Flink's external resources intend",
		Long: `yarn-er makes Flink's external resources (GPUs, FPGAs, any custom YARN resource type) work on
Hadoop YARN 3.1+. It translates Flink's configuration into the container YARN will be asked for,
checks a cluster before a job is submitted, inspects the cluster, and discovers devices inside
containers without handing one device to two processes.`,
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.setup(cmd)
		},
		Args: cobra.ArbitraryArgs,
		RunE: helpOrUnknownCommand,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err: err} })
	pf := root.PersistentFlags()
	pf.StringVarP(&a.output, "output", "o", "table", "output format: table, json or yaml")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "log debug messages to stderr")
	pf.StringVar(&a.logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	pf.StringVar(&a.logFormat, "log-format", "text", "log format: text or json")
	pf.StringVar(&a.config, "config", "", "yarn-er settings file (YAML, JSON or TOML; keys are flag names)")
	_ = root.RegisterFlagCompletionFunc("output", fixedCompletion("table", "json", "yaml"))
	_ = root.RegisterFlagCompletionFunc("log-level", fixedCompletion("debug", "info", "warn", "error"))
	_ = root.RegisterFlagCompletionFunc("log-format", fixedCompletion("text", "json"))

	// Each command lives in a file of its own; register it here.
	root.AddCommand(
		newTranslateCmd(a),
		newPreflightCmd(a),
		newClusterCmd(a),
		newDiscoverCmd(a),
		newExecCmd(a),
		newSubmitCmd(a),
		newAppCmd(a),
		newAMCmd(a),
		newVersionCmd(a),
		newExitCodesHelp(),
	)
	root.SuggestionsMinimumDistance = 2
	markArgErrorsAsUsage(root)
	return root
}

// helpOrUnknownCommand is the RunE of a command that only groups subcommands: without arguments it
// prints the help, else the first argument is an unknown subcommand (a usage error, with
// suggestions).
func helpOrUnknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return &usageError{err: errors.New(msg)}
}

// markArgErrorsAsUsage makes every command's argument validation return a usage error (exit 2),
// including unknown subcommands.
func markArgErrorsAsUsage(cmd *cobra.Command) {
	validate := cmd.Args
	if validate == nil {
		validate = cobra.ArbitraryArgs
		if !cmd.Runnable() {
			validate = cobra.NoArgs
		}
	}
	cmd.Args = func(c *cobra.Command, args []string) error {
		if err := validate(c, args); err != nil {
			return &usageError{err: err}
		}
		return nil
	}
	for _, sub := range cmd.Commands() {
		markArgErrorsAsUsage(sub)
	}
}

// fixedCompletion completes a flag from a fixed list of values.
func fixedCompletion(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}
