// Package tokens is the hidden `yarn-er tokens`: `tokens follow` runs beside a rank's program in
// its container and keeps the container's token file fresh with the HDFS delegation tokens the
// ApplicationMaster publishes (submit --ship-keytab; docs/kerberos.md).
package tokens

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/am"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/records"
)

// FollowOptions are `tokens follow`'s inputs.
type FollowOptions struct {
	cmdutil.Base
	// Dir is the application's staging directory (--dir).
	Dir string
	// NameNodes are the NameNodes of the HA nameservice Dir names (--namenodes).
	NameNodes []string
	// Every is the interval between reads (--every).
	Every time.Duration
	// Parent is the process whose end ends the command (--parent; 0: none).
	Parent int
}

// NewCmdTokens returns `yarn-er tokens` with its subcommand; runF (nil: followRun) runs follow.
func NewCmdTokens(f *cmdutil.Factory, runF func(*FollowOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:    "tokens",
		Hidden: true,
		Short:  "Fresh HDFS delegation tokens inside a rank's container (started by yarn-er's ApplicationMaster)",
		Args:   cobra.NoArgs,
	}
	opts := &FollowOptions{Base: cmdutil.Base{F: f}}
	follow := &cobra.Command{
		Use:   "follow --dir URL [--namenodes ADDRS] [--every D] [--parent PID]",
		Short: "Keep $HADOOP_TOKEN_FILE_LOCATION fresh with the tokens the ApplicationMaster publishes",
		Long: `follow reads the HDFS delegation tokens that yarn-er's ApplicationMaster publishes on the
application's staging directory (the extended attribute user.` + am.TokenXAttr + `), with the token
the container already holds, and replaces the container's token file ($HADOOP_TOKEN_FILE_LOCATION)
whenever they are new: a complete file renamed into place, other tokens kept. It runs until the
process --parent names ends. The ApplicationMaster starts it beside every rank of a job submitted
with --ship-keytab; it is not for starting by hand.`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(opts, runF, followRun),
	}
	fl := follow.Flags()
	fl.StringVar(&opts.Dir, "dir", "", "the application's staging directory, hdfs://namenode:port/path")
	fl.StringSliceVar(&opts.NameNodes, "namenodes", nil, "the RPC addresses (host:port,...) of the NameNodes of the HA nameservice --dir names")
	fl.DurationVar(&opts.Every, "every", 0, "how often to read the published tokens (default 10m)")
	fl.IntVar(&opts.Parent, "parent", 0, "stop when this process has ended")
	cmd.AddCommand(follow)
	return cmd
}

func followRun(opts *FollowOptions) error {
	if opts.Dir == "" {
		return cmdutil.Usagef("--dir is required: the application's staging directory")
	}
	if opts.Every < 0 || opts.Parent < 0 {
		return cmdutil.Usagef("--every and --parent must not be negative")
	}
	return am.FollowTokens(opts.Ctx, am.FollowOptions{Dir: opts.Dir, NameNodes: opts.NameNodes, TokenFile: opts.F.Env.Getenv(records.EnvTokenFile),
		Every: opts.Every, Parent: opts.Parent, Logger: opts.F.Logger()})
}
