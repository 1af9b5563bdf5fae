package records

import (
	"errors"
	"regexp"
)

// Names of YARN's built-in and well-known resource types (Hadoop's ResourceInformation constants).
const (
	// MemoryMB is the mandatory memory resource, in "Mi".
	MemoryMB = "memory-mb"
	// VCores is the mandatory virtual-core resource, without unit.
	VCores = "vcores"
	// GPU is the resource type of YARN's GPU plugin.
	GPU = "yarn.io/gpu"
	// FPGA is the resource type of YARN's FPGA plugin.
	FPGA = "yarn.io/fpga"
)

// MemoryUnits is the unit of memory-mb; vcores has none.
const MemoryUnits = "Mi"

// reservedNames may not be declared in yarn.resource-types ("memory" for historical reasons).
var reservedNames = [...]string{"memory", MemoryMB, VCores}

// IsReservedName reports whether name is one yarn.resource-types may not declare: "memory",
// "memory-mb" or "vcores" (case-sensitive, as in Hadoop).
func IsReservedName(name string) bool {
	for _, r := range reservedNames {
		if name == r {
			return true
		}
	}
	return false
}

// resourceNamePattern is Hadoop's ResourceUtils.RESOURCE_NAME_PATTERN with Java's ASCII classes
// spelled out (\p{Alnum} = [A-Za-z0-9], \p{Alpha} = [A-Za-z], \w = [A-Za-z0-9_]). RE2 matches in
// linear time, so no input can make it slow.
var resourceNamePattern = regexp.MustCompile(
	`^((([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)/)?[A-Za-z][A-Za-z0-9_.-]*$`)

// ErrInvalidName is wrapped by the error of ValidateResourceName (errors.Is).
var ErrInvalidName = errors.New("invalid resource name")

// NameError reports a resource name that breaks Hadoop's rule, with Hadoop's message.
type NameError struct {
	Name string
}

// Error implements error with ResourceUtils' wording.
func (e *NameError) Error() string {
	return "'" + e.Name + "' is not a valid resource name. A valid resource name must begin with a letter " +
		"and contain only letters, numbers, and any of: '.', '_', or '-'. A valid resource name may also be " +
		"optionally preceded by a name space followed by a slash. A valid name space consists of " +
		"period-separated groups of letters, numbers, and dashes."
}

// Is makes errors.Is(err, ErrInvalidName) true.
func (e *NameError) Is(target error) bool { return target == ErrInvalidName }

// ValidateResourceName checks name against Hadoop's resource name rule: an optional name space of
// period-separated groups of ASCII letters, digits and inner dashes followed by '/', then an ASCII
// letter and any number of letters, digits, '.', '_' or '-'. "yarn.io/gpu", "my_resource" and
// "My-Resource01" pass; "10myresource", "my resource" and "com/acme/myresource" do not. It returns a
// *NameError, or nil. Reserved names are valid names; see IsReservedName.
func ValidateResourceName(name string) error {
	if !resourceNamePattern.MatchString(name) {
		return &NameError{Name: name}
	}
	return nil
}
