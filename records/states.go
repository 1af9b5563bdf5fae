package records

import (
	"fmt"
	"slices"
	"strings"
)

// ApplicationState is an application's state (YarnApplicationState).
type ApplicationState string

// Application states, in the order an application goes through them.
const (
	AppNew       ApplicationState = "NEW"
	AppNewSaving ApplicationState = "NEW_SAVING"
	AppSubmitted ApplicationState = "SUBMITTED"
	AppAccepted  ApplicationState = "ACCEPTED"
	AppRunning   ApplicationState = "RUNNING"
	AppFinished  ApplicationState = "FINISHED"
	AppFailed    ApplicationState = "FAILED"
	AppKilled    ApplicationState = "KILLED"
)

var applicationStates = []ApplicationState{AppNew, AppNewSaving, AppSubmitted, AppAccepted, AppRunning, AppFinished, AppFailed, AppKilled}

// ApplicationStates returns every application state, in lifecycle order.
func ApplicationStates() []ApplicationState { return slices.Clone(applicationStates) }

// Terminal reports whether the state is final: FINISHED, FAILED or KILLED (any letter case).
func (s ApplicationState) Terminal() bool {
	switch ApplicationState(strings.ToUpper(string(s))) {
	case AppFinished, AppFailed, AppKilled:
		return true
	}
	return false
}

// ParseApplicationState reads a state name in any letter case ("running"). An unknown name is an
// error listing the valid ones.
func ParseApplicationState(s string) (ApplicationState, error) {
	st := ApplicationState(strings.ToUpper(strings.TrimSpace(s)))
	if slices.Contains(applicationStates, st) {
		return st, nil
	}
	names := make([]string, len(applicationStates))
	for i, a := range applicationStates {
		names[i] = string(a)
	}
	return "", fmt.Errorf("unknown application state %q (valid: %s)", s, strings.Join(names, ", "))
}

// ContainerState is a container's state (ContainerState; the protobuf enum adds a "C_" prefix).
type ContainerState string

// Container states.
const (
	ContainerNew      ContainerState = "NEW"
	ContainerRunning  ContainerState = "RUNNING"
	ContainerComplete ContainerState = "COMPLETE"
)

// FinalStatus is an application's final status (FinalApplicationStatus). Its value is the
// protobuf enum number (FinalApplicationStatusProto: APP_UNDEFINED = 0, ...).
type FinalStatus int32

// Final statuses.
const (
	FinalUndefined FinalStatus = 0
	FinalSucceeded FinalStatus = 1
	FinalFailed    FinalStatus = 2
	FinalKilled    FinalStatus = 3
	FinalEnded     FinalStatus = 4
)

var finalStatusNames = [...]string{"UNDEFINED", "SUCCEEDED", "FAILED", "KILLED", "ENDED"}

// String returns the status as YARN spells it over REST: UNDEFINED, SUCCEEDED, FAILED, KILLED or
// ENDED; FinalStatus(n) for a number YARN does not define.
func (s FinalStatus) String() string {
	if s >= 0 && int(s) < len(finalStatusNames) {
		return finalStatusNames[s]
	}
	return fmt.Sprintf("FinalStatus(%d)", int32(s))
}

// ParseFinalStatus reads a status name in any letter case, with or without the protobuf "APP_"
// prefix. An unknown name is an error listing the valid ones.
func ParseFinalStatus(s string) (FinalStatus, error) {
	name := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(s)), "APP_")
	if i := slices.Index(finalStatusNames[:], name); i >= 0 {
		return FinalStatus(i), nil
	}
	return 0, fmt.Errorf("unknown final status %q (valid: %s)", s, strings.Join(finalStatusNames[:], ", "))
}

// MarshalText writes the status name.
func (s FinalStatus) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a status name (see ParseFinalStatus).
func (s *FinalStatus) UnmarshalText(b []byte) error { return parseText(s, b, ParseFinalStatus) }
