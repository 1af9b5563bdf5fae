package records

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// ApplicationID is a YARN application id, application_<clusterTimestamp>_<id> (Hadoop's
// ApplicationId). Ids order by cluster timestamp, then by number: application_1_10000 comes after
// application_1_9999, unlike their strings.
type ApplicationID struct {
	// ClusterTimestamp is the start time of the ResourceManager that issued the id, in ms.
	ClusterTimestamp int64
	// ID is the application's sequence number at that ResourceManager.
	ID int32
}

// String formats the id as Hadoop does: application_1700000000000_0001 (at least four digits).
func (a ApplicationID) String() string {
	return fmt.Sprintf("application_%d_%04d", a.ClusterTimestamp, a.ID)
}

// IsZero reports whether a is the zero id (never one the RM issues).
func (a ApplicationID) IsZero() bool { return a == ApplicationID{} }

// Compare orders ids by cluster timestamp, then number: -1, 0 or +1.
func (a ApplicationID) Compare(b ApplicationID) int {
	return cmp.Or(cmp.Compare(a.ClusterTimestamp, b.ClusterTimestamp), cmp.Compare(a.ID, b.ID))
}

// ApplicationAttemptID is one attempt of an application's ApplicationMaster,
// appattempt_<clusterTimestamp>_<app>_<attempt> (Hadoop's ApplicationAttemptId).
type ApplicationAttemptID struct {
	Application ApplicationID
	// Attempt is the attempt number, from 1.
	Attempt int32
}

// String formats the id as Hadoop does: appattempt_1700000000000_0001_000001.
func (a ApplicationAttemptID) String() string {
	return fmt.Sprintf("appattempt_%d_%04d_%06d", a.Application.ClusterTimestamp, a.Application.ID, a.Attempt)
}

// Compare orders attempts by application, then attempt number.
func (a ApplicationAttemptID) Compare(b ApplicationAttemptID) int {
	return cmp.Or(a.Application.Compare(b.Application), cmp.Compare(a.Attempt, b.Attempt))
}

// MaxContainerEpoch is the largest ResourceManager epoch a container id can carry.
const MaxContainerEpoch = 1<<23 - 1

// MaxContainerSequence is the largest container number within one epoch (40 bits).
const MaxContainerSequence = 1<<40 - 1

// ContainerID is a YARN container id,
// container_[e<epoch>_]<clusterTimestamp>_<app>_<attempt>_<container> (Hadoop's ContainerId). The
// epoch counts ResourceManager restarts with work-preserving recovery; Hadoop keeps it in the bits
// above 40 of the container number.
type ContainerID struct {
	Attempt ApplicationAttemptID
	// Epoch is the ResourceManager epoch, 0 to MaxContainerEpoch.
	Epoch int64
	// Sequence is the container's number within the epoch, 0 to MaxContainerSequence.
	Sequence int64
}

// Number returns the container number as Hadoop's ContainerId.getContainerId carries it on the
// wire: epoch<<40 | sequence.
func (c ContainerID) Number() int64 { return c.Epoch<<40 | c.Sequence }

// ContainerIDFromNumber splits a wire container number (epoch<<40 | sequence) into a ContainerID.
func ContainerIDFromNumber(att ApplicationAttemptID, n int64) ContainerID {
	return ContainerID{Attempt: att, Epoch: n >> 40, Sequence: n & MaxContainerSequence}
}

// String formats the id as Hadoop does: container_1700000000000_0001_01_000002, or
// container_e05_1700000000000_0001_01_000003 with an epoch.
func (c ContainerID) String() string {
	var b strings.Builder
	b.WriteString("container_")
	if c.Epoch > 0 {
		fmt.Fprintf(&b, "e%02d_", c.Epoch)
	}
	a := c.Attempt.Application
	fmt.Fprintf(&b, "%d_%04d_%02d_%06d", a.ClusterTimestamp, a.ID, c.Attempt.Attempt, c.Sequence)
	return b.String()
}

// IsZero reports whether c is the zero id.
func (c ContainerID) IsZero() bool { return c == ContainerID{} }

// Compare orders containers by attempt, then epoch, then number.
func (c ContainerID) Compare(d ContainerID) int {
	return cmp.Or(c.Attempt.Compare(d.Attempt), cmp.Compare(c.Epoch, d.Epoch), cmp.Compare(c.Sequence, d.Sequence))
}

// MarshalText writes the id's string form (JSON, YAML, flags).
func (c ContainerID) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText parses the string form (see ParseContainerID).
func (c *ContainerID) UnmarshalText(b []byte) error { return parseText(c, b, ParseContainerID) }

// MarshalText writes the id's string form.
func (a ApplicationID) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText parses the string form (see ParseApplicationID).
func (a *ApplicationID) UnmarshalText(b []byte) error { return parseText(a, b, ParseApplicationID) }

// parseText is the UnmarshalText of a type read by parse: it stores the value parse reads from b
// in dst, which an error leaves as it was.
func parseText[T any](dst *T, b []byte, parse func(string) (T, error)) error {
	v, err := parse(string(b))
	if err != nil {
		return err
	}
	*dst = v
	return nil
}

// IDError reports text that is not a YARN id of the expected kind.
type IDError struct {
	// Kind is "application", "application attempt" or "container".
	Kind string
	// Text is the text given.
	Text string
	// Reason says what is wrong.
	Reason string
}

// Error names the text, the reason and the expected form.
func (e *IDError) Error() string {
	want := map[string]string{
		"application":         "application_<clusterTimestamp>_<id>, e.g. application_1700000000000_0001",
		"application attempt": "appattempt_<clusterTimestamp>_<app>_<attempt>, e.g. appattempt_1700000000000_0001_000001",
		"container":           "container_[e<epoch>_]<clusterTimestamp>_<app>_<attempt>_<id>, e.g. container_1700000000000_0001_01_000002",
	}[e.Kind]
	return fmt.Sprintf("invalid %s id %q: %s (want %s)", e.Kind, e.Text, e.Reason, want)
}

// parseDecimal parses ASCII digits only (no sign, no blanks) into a value at most limit.
func parseDecimal(s string, limit int64) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil && v <= limit
}

const maxInt32 = 1<<31 - 1

// parseAppParts reads <clusterTimestamp>_<id> from parts[0:2].
func parseAppParts(kind, text string, parts []string) (ApplicationID, error) {
	ts, ok := parseDecimal(parts[0], 1<<63-1)
	if !ok {
		return ApplicationID{}, &IDError{Kind: kind, Text: text, Reason: "bad cluster timestamp"}
	}
	n, ok := parseDecimal(parts[1], maxInt32)
	if !ok {
		return ApplicationID{}, &IDError{Kind: kind, Text: text, Reason: "bad application number"}
	}
	return ApplicationID{ClusterTimestamp: ts, ID: int32(n)}, nil
}

// ParseApplicationID parses application_<clusterTimestamp>_<id> (decimal digits; the number fits a
// Java int). Errors are *IDError.
func ParseApplicationID(s string) (ApplicationID, error) {
	parts := strings.Split(s, "_")
	if len(parts) != 3 || parts[0] != "application" {
		return ApplicationID{}, &IDError{Kind: "application", Text: s, Reason: "wrong prefix or number of parts"}
	}
	return parseAppParts("application", s, parts[1:])
}

// ParseApplicationAttemptID parses appattempt_<clusterTimestamp>_<app>_<attempt>. Errors are
// *IDError.
func ParseApplicationAttemptID(s string) (ApplicationAttemptID, error) {
	const kind = "application attempt"
	parts := strings.Split(s, "_")
	if len(parts) != 4 || parts[0] != "appattempt" {
		return ApplicationAttemptID{}, &IDError{Kind: kind, Text: s, Reason: "wrong prefix or number of parts"}
	}
	app, err := parseAppParts(kind, s, parts[1:3])
	if err != nil {
		return ApplicationAttemptID{}, err
	}
	att, ok := parseDecimal(parts[3], maxInt32)
	if !ok {
		return ApplicationAttemptID{}, &IDError{Kind: kind, Text: s, Reason: "bad attempt number"}
	}
	return ApplicationAttemptID{Application: app, Attempt: int32(att)}, nil
}

// ParseContainerID parses container_[e<epoch>_]<clusterTimestamp>_<app>_<attempt>_<container>, as
// Hadoop's ContainerId.fromString reads it (the epoch fits 23 bits and the container number 40).
// Errors are *IDError.
func ParseContainerID(s string) (ContainerID, error) {
	const kind = "container"
	bad := func(why string) (ContainerID, error) {
		return ContainerID{}, &IDError{Kind: kind, Text: s, Reason: why}
	}
	parts := strings.Split(s, "_")
	if len(parts) < 5 || parts[0] != "container" {
		return bad("wrong prefix or too few parts")
	}
	parts = parts[1:]
	var epoch int64
	if strings.HasPrefix(parts[0], "e") {
		e, ok := parseDecimal(parts[0][1:], MaxContainerEpoch)
		if !ok {
			return bad("bad epoch")
		}
		epoch = e
		parts = parts[1:]
	}
	if len(parts) != 4 {
		return bad("wrong number of parts")
	}
	app, err := parseAppParts(kind, s, parts[:2])
	if err != nil {
		return ContainerID{}, err
	}
	att, ok := parseDecimal(parts[2], maxInt32)
	if !ok {
		return bad("bad attempt number")
	}
	n, ok := parseDecimal(parts[3], MaxContainerSequence)
	if !ok {
		return bad("bad container number")
	}
	return ContainerID{Attempt: ApplicationAttemptID{Application: app, Attempt: int32(att)}, Epoch: epoch, Sequence: n}, nil
}
