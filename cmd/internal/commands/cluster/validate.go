package cluster

import (
	"github.com/yarn-er/yarn-er/internal/suggest"
	"slices"
	"strings"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
)

// nodeStates are YARN's NodeState values, what --state of `cluster nodes` accepts.
var nodeStates = []string{"NEW", "RUNNING", "UNHEALTHY", "DECOMMISSIONING", "DECOMMISSIONED", "LOST", "REBOOTED", "SHUTDOWN"}

// appStates are YARN's YarnApplicationState values, what --state of `cluster apps` accepts.
var appStates = []string{"NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING", "FINISHED", "FAILED", "KILLED"}

// checkStates returns a usage error for the first of states (any case) that is not one of valid,
// listing the valid ones. The RM would answer an unknown state with a Java enum error.
func checkStates(states, valid []string) error {
	for _, s := range states {
		if !slices.Contains(valid, strings.ToUpper(strings.TrimSpace(s))) {
			return cmdutil.Usagef("--state %q: not a YARN state; want one or more (comma-separated) of %s", s, strings.Join(valid, ", "))
		}
	}
	return nil
}

// nearest returns the name of known closest to name when it is close enough to be a likely slip
// (an edit distance of at most 2, ignoring case, or a prefix of it), else "".
func nearest(name string, known []string) string { return suggest.Nearest(name, known, true) }
