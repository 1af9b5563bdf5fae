package amrm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
)

// containerID parses a container id a test spells out.
func containerID(t testing.TB, s string) records.ContainerID {
	t.Helper()
	id, err := records.ParseContainerID(s)
	require.NoError(t, err)
	return id
}

// javaCredentials reads the token storage file Hadoop 3.5.0 wrote (records/testdata/README.md):
// one AMRMToken under alias amrm-alias and one secret.
func javaCredentials(t testing.TB) *records.Credentials {
	t.Helper()
	c, err := records.ReadTokenFile("../records/testdata/hdts-v0-hadoop-3.5.0.bin")
	require.NoError(t, err)
	return c
}
