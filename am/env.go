package am

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/yarn-er/yarn-er/amrm"
	"github.com/yarn-er/yarn-er/records"
)

// Environment variables the NodeManager and the ResourceManager set in an AM container
// (ApplicationConstants.Environment and AMLauncher).
const (
	EnvContainerID = "CONTAINER_ID"
	EnvSubmitTime  = "APP_SUBMIT_TIME_ENV"
	EnvMaxAttempts = "MAX_APP_ATTEMPTS"
	EnvNMHost      = "NM_HOST"
)

// ErrEnvironment reports an AM container environment that lacks what the AM needs.
var ErrEnvironment = errors.New("am: AM container environment")

// Identity is who the ApplicationMaster is, from its container's environment.
type Identity struct {
	// AppID is the application id (application_<clusterTimestamp>_<number>).
	AppID string
	// AttemptID is the attempt id (appattempt_<clusterTimestamp>_<number>_<attempt>).
	AttemptID string
	// Attempt is the attempt number, from 1.
	Attempt int
	// MaxAttempts is the application's maximum number of attempts (0: unknown).
	MaxAttempts int
	// ContainerID is the AM's own container.
	ContainerID records.ContainerID
	// SubmitTime is when the application was submitted (zero: unknown).
	SubmitTime time.Time
	// Host is the AM's host as the NodeManager names it (registered with the RM).
	Host string
}

// LastAttempt reports whether no attempt follows this one if it fails (unknown counts as last).
func (id Identity) LastAttempt() bool { return id.MaxAttempts <= 0 || id.Attempt >= id.MaxAttempts }

// FromEnv returns Options with the AM's identity and credentials from its container's
// environment: CONTAINER_ID (application and attempt), HADOOP_TOKEN_FILE_LOCATION (the
// AMRMToken), APP_SUBMIT_TIME_ENV, MAX_APP_ATTEMPTS and NM_HOST. getenv is usually os.Getenv;
// the other options keep their defaults.
func FromEnv(getenv func(string) string) (Options, error) {
	id, creds, err := identityFromEnv(getenv)
	if err != nil {
		return Options{}, err
	}
	return Options{Identity: id, Credentials: creds}, nil
}

func identityFromEnv(getenv func(string) string) (Identity, *records.Credentials, error) {
	var id Identity
	cid := getenv(EnvContainerID)
	if cid == "" {
		return id, nil, fmt.Errorf("%w: %s is not set: yarn-er am runs only as a YARN ApplicationMaster (submitted by yarn-er submit)", ErrEnvironment, EnvContainerID)
	}
	c, err := records.ParseContainerID(cid)
	if err != nil {
		return id, nil, fmt.Errorf("%w: %s=%q: %w", ErrEnvironment, EnvContainerID, cid, err)
	}
	if c.Attempt.Attempt < 1 {
		return id, nil, fmt.Errorf("%w: %s=%q: attempt number %d (want 1 or more)", ErrEnvironment, EnvContainerID, cid, c.Attempt.Attempt)
	}
	id.ContainerID = c
	id.AppID, id.AttemptID, id.Attempt = c.Attempt.Application.String(), c.Attempt.String(), int(c.Attempt.Attempt)
	if v := getenv(EnvSubmitTime); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return id, nil, fmt.Errorf("%w: %s=%q is not milliseconds since the epoch", ErrEnvironment, EnvSubmitTime, v)
		}
		id.SubmitTime = time.UnixMilli(ms)
	}
	if v := getenv(EnvMaxAttempts); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return id, nil, fmt.Errorf("%w: %s=%q is not a count", ErrEnvironment, EnvMaxAttempts, v)
		}
		id.MaxAttempts = n
	}
	id.Host = getenv(EnvNMHost)
	tf := getenv(records.EnvTokenFile)
	if tf == "" {
		return id, nil, fmt.Errorf("%w: %s is not set: the NodeManager gives every AM container its token file; without it the AM cannot authenticate to the ResourceManager (%w)",
			ErrEnvironment, records.EnvTokenFile, amrm.ErrNoToken)
	}
	creds, err := records.ReadTokenFile(tf)
	if err != nil {
		return id, nil, fmt.Errorf("%s=%s: %w", records.EnvTokenFile, tf, err)
	}
	if _, _, ok := creds.TokenByKind(records.KindAMRMToken); !ok {
		return id, nil, fmt.Errorf("%s=%s holds no %s token: %w", records.EnvTokenFile, tf, records.KindAMRMToken, amrm.ErrNoToken)
	}
	return id, creds, nil
}
