package cmdutil

import (
	"context"

	"github.com/spf13/cobra"
)

// Base is what every command's options embed: the Factory, and the context and positional
// arguments of the run, which RunE fills in.
type Base struct {
	// F is the Factory the command was made with.
	F *Factory
	// Ctx is the command's context: cancelled by SIGINT or SIGTERM.
	Ctx context.Context
	// Args are the positional arguments (after --, for exec).
	Args []string
}

// base returns b; it lets RunE reach the Base embedded in any options struct.
func (b *Base) base() *Base { return b }

// Options is an options struct embedding Base.
type Options interface{ base() *Base }

// RunE returns a command's RunE: it records the context and arguments in opts, then calls
// runF(opts) when runF is set (tests capture the options there) or else run(opts).
func RunE[T Options](opts T, runF, run func(T) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		b := opts.base()
		b.Ctx, b.Args = cmd.Context(), args
		if runF != nil {
			return runF(opts)
		}
		return run(opts)
	}
}
