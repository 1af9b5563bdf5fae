// Package exitcodes is the help topic `yarn-er help exit-codes`.
package exitcodes

import "github.com/spf13/cobra"

// NewCmdExitCodes returns the help topic that lists yarn-er's exit codes.
func NewCmdExitCodes() *cobra.Command {
	return &cobra.Command{
		Use:   "exit-codes",
		Short: "What yarn-er's exit codes mean",
		Long: `yarn-er exits with:
  0  success
  1  an error (a file that cannot be read, a cluster that cannot be reached, ...)
  2  usage: a bad flag or argument, including a value the cluster cannot have (a --state that is not
     a YARN state, a cluster nodes --resource type that no node reports)
  3  validation findings: a check (preflight, lint) found problems, or doctor found a node whose
     containers can open GPUs they were not given
  4  authentication or authorization failed (Kerberos, HTTP 401/403, bad token, a proxy user (--do-as) refused)
  5  not enough devices, or the devices asked for are held by other processes
  6  the YARN application ended FAILED (submit, app wait)
  7  the YARN application was KILLED (submit, app wait)
130  interrupted (SIGINT)
143  terminated (SIGTERM)

A first SIGINT or SIGTERM cancels what the command is doing; a command still busy 3 seconds later
(blocked on a FIFO, say), or a second signal, ends the process at once with the same code.`,
	}
}
