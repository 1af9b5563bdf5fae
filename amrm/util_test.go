package amrm

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
)

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

// containerID parses a container id a test spells out.
func containerID(t testing.TB, s string) records.ContainerID {
	t.Helper()
	id, err := records.ParseContainerID(s)
	require.NoError(t, err)
	return id
}
