package profile

import (
	"errors"
	"fmt"

	"github.com/yarn-er/yarn-er/conf"
)

// Problem codes. They are stable, public identifiers shared with the preflight checks; a problem's
// message may change wording, its code does not.
const (
	// CodeResourceTypesInvalid: yarn.resource-types or a yarn.resource-types.<r>.* key is wrong (bad
	// or reserved name, duplicate, empty item, unknown unit or type, non-numeric or inconsistent
	// minimum/maximum allocation). The ResourceManager refuses to start on the errors among them.
	CodeResourceTypesInvalid = "yarn.resource-types-invalid"
	// CodeResourceTypeUndeclared: Flink asks for a resource type that yarn.resource-types does not
	// declare; the ResourceManager drops unknown types from requests.
	CodeResourceTypeUndeclared = "yarn.resource-type-undeclared"
	// CodeNodeResourcesInvalid: a NodeManager resource (yarn.nodemanager.resource-type.<r>,
	// yarn.nodemanager.resource.memory-mb / cpu-vcores) is wrong or loses its value in conversion.
	CodeNodeResourcesInvalid = "yarn.node-resources-invalid"

	// CodeResourceNotListed: external-resource.<name>.* keys exist for a name that external-resources
	// does not list, so Flink ignores them.
	CodeResourceNotListed = "flink.resource-not-listed"
	// CodeAmountInvalid: external-resource.<name>.amount is missing or not positive (warning, the
	// resource is ignored, as Flink does) or not a whole number (error, as Flink fails).
	CodeAmountInvalid = "flink.amount-invalid"
	// CodeNoYarnConfigKey: external-resource.<name>.yarn.config-key is missing or blank, so the
	// resource is not requested from YARN.
	CodeNoYarnConfigKey = "flink.no-yarn-config-key"
	// CodeDuplicateConfigKey: two resources name the same yarn.config-key; Flink requests only the
	// last of them in Java HashSet order, and so does yarn-er (warning).
	CodeDuplicateConfigKey = "flink.duplicate-config-key"
	// CodeNoDriverFactory: external-resource.<name>.driver-factory.class is missing, so the
	// TaskManager gets no information about the resource.
	CodeNoDriverFactory = "flink.no-driver-factory"
	// CodeYarnConfigKeyInvalid: a yarn.config-key is not a valid YARN resource name (warning: no
	// cluster can declare it) or names memory-mb, memory or vcores (error: it would overwrite the
	// container's memory or cores).
	CodeYarnConfigKeyInvalid = "flink.yarn-config-key-invalid"
	// CodeExternalResourcesInvalid: the external-resources list cannot be split (bad quoting).
	CodeExternalResourcesInvalid = "flink.external-resources-invalid"
	// CodeMemoryInvalid: taskmanager.memory.process.size is missing (warning), not a memory size or
	// too large (error), or not a whole number of MiB (warning: Flink rounds it down).
	CodeMemoryInvalid = "flink.memory-invalid"
	// CodeCPUInvalid: taskmanager.cpu.cores, yarn.containers.vcores or taskmanager.numberOfTaskSlots
	// is not a number or not positive (error), or fractional (warning: Flink rounds it up).
	CodeCPUInvalid = "flink.cpu-invalid"
)

// Severity says whether a problem stops the work (error) or is reported and tolerated (warning).
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Problem is one finding about a configuration.
type Problem struct {
	// Code is the stable identifier, one of the Code* constants.
	Code string `json:"code"`
	// Severity is error or warning.
	Severity Severity `json:"severity"`
	// Source is where the offending value is (file:line or -D flag); zero when not tied to one value.
	Source conf.Source `json:"-"`
	// Key is the configuration key concerned, when there is one.
	Key string `json:"key,omitempty"`
	// Message says what is wrong, in Hadoop's or Flink's words where they have them.
	Message string `json:"message"`
	// Fix says how to repair it, in one sentence.
	Fix string `json:"fix,omitempty"`
}

// String renders the problem like a *conf.Error: "source: key: message (fix: ...)".
func (p Problem) String() string { return p.Err().Error() }

// Err returns the problem as a *conf.Error whose Err is a *CodedError carrying the code.
func (p Problem) Err() error {
	key := p.Key
	if p.Source.File == "" && p.Source.Flag == "-D "+p.Key {
		key = "" // the flag already names the key
	}
	return &conf.Error{Source: p.Source, Key: key, Err: &CodedError{Code: p.Code, Message: p.Message}, Fix: p.Fix}
}

// CodedError is the problem inside the *conf.Error values this package returns; callers read the code
// with errors.As.
type CodedError struct {
	Code    string
	Message string
}

// Error returns the message.
func (e *CodedError) Error() string { return e.Message }

// ProblemCode returns the code of the first *CodedError in err's chain, or "".
func ProblemCode(err error) string {
	var ce *CodedError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return ""
}

// problemList collects the problems a loader finds; add is how every loader of this package records
// one.
type problemList struct {
	problems []Problem
}

func (l *problemList) add(sev Severity, code string, src conf.Source, key, fix, format string, args ...any) {
	l.problems = append(l.problems, Problem{Code: code, Severity: sev, Source: src, Key: key,
		Message: fmt.Sprintf(format, args...), Fix: fix})
}

// joinErrors returns the errors of the error-severity problems joined, or nil when there are none.
func joinErrors(problems []Problem) error {
	var errs []error
	for _, p := range problems {
		if p.Severity == SeverityError {
			errs = append(errs, p.Err())
		}
	}
	return errors.Join(errs...)
}

// Errors returns the problems of severity error.
func Errors(problems []Problem) []Problem { return filterSeverity(problems, SeverityError) }

// Warnings returns the problems of severity warning.
func Warnings(problems []Problem) []Problem { return filterSeverity(problems, SeverityWarning) }

func filterSeverity(problems []Problem, s Severity) []Problem {
	var out []Problem
	for _, p := range problems {
		if p.Severity == s {
			out = append(out, p)
		}
	}
	return out
}
