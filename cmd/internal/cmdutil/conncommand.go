package cmdutil

import "github.com/spf13/cobra"

// ConnOptions are the options of a command that takes only the ResourceManager connection flags
// (and -o).
type ConnOptions struct {
	Base
	Conn *ClusterConn
}

// NewConnCommand returns the command use (no arguments, the connection flags, described by
// short) of ConnOptions; it runs runF, or run when runF is nil.
func NewConnCommand(f *Factory, use, short string, runF, run func(*ConnOptions) error) *cobra.Command {
	opts := &ConnOptions{Base: Base{F: f}}
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs}
	cmd.RunE = RunE(opts, runF, run)
	opts.Conn = f.NewClusterConn(cmd)
	return cmd
}
