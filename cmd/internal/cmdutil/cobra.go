package cmdutil

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// HelpOrUnknownCommand is the RunE of a command that only groups subcommands: without arguments it
// prints the help, else the first argument is an unknown subcommand (a usage error, with
// suggestions).
func HelpOrUnknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return &UsageError{Err: errors.New(msg)}
}

// NewGroupCommand returns the command use, described by short and long (may be empty), that only
// groups subs: run without a subcommand it prints its help, with an unknown one it fails as
// HelpOrUnknownCommand does.
func NewGroupCommand(use, short, long string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Long: long, Args: cobra.ArbitraryArgs, RunE: HelpOrUnknownCommand}
	cmd.AddCommand(subs...)
	return cmd
}

// MarkArgErrorsAsUsage makes every command's argument validation return a usage error (exit 2),
// including unknown subcommands.
func MarkArgErrorsAsUsage(cmd *cobra.Command) {
	validate := cmd.Args
	if validate == nil {
		validate = cobra.ArbitraryArgs
		if !cmd.Runnable() {
			validate = cobra.NoArgs
		}
	}
	cmd.Args = func(c *cobra.Command, args []string) error {
		if err := validate(c, args); err != nil {
			return &UsageError{Err: err}
		}
		return nil
	}
	for _, sub := range cmd.Commands() {
		MarkArgErrorsAsUsage(sub)
	}
}

// FixedCompletion completes a flag from a fixed list of values.
func FixedCompletion(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}
