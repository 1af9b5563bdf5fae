package records

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestContainerIDMatchesHadoop(t *testing.T) {
	att := ApplicationAttemptID{Application: ApplicationID{ClusterTimestamp: 1700000000000, ID: 1}, Attempt: 1}
	// ContainerId.toString() from Hadoop 3.5.0.
	assert.Equal(t, "container_1700000000000_0001_01_000002", ContainerIDFromNumber(att, 2).String())
	assert.Equal(t, "container_e05_1700000000000_0001_01_000003", ContainerIDFromNumber(att, 5<<40|3).String())

	// ContainerId.fromString("container_e17_1700000000000_0001_01_000003").getContainerId() in Hadoop 3.5.0.
	id, err := ParseContainerID("container_e17_1700000000000_0001_01_000003")
	require.NoError(t, err)
	assert.Equal(t, int64(18691697672195), id.Number())
	assert.Equal(t, att, id.Attempt)
	assert.Equal(t, int64(17), id.Epoch)
	assert.Equal(t, int64(3), id.Sequence)
}

func TestParseContainerID(t *testing.T) {
	for _, ok := range []string{
		"container_1700000000000_0001_01_000002",
		"container_e05_1700000000000_12345_100_1234567",
	} {
		id, err := ParseContainerID(ok)
		require.NoError(t, err, ok)
		assert.Equal(t, ok, id.String(), "round trip")
	}
	for _, bad := range []string{
		"", "container", "application_1_0001", "container_1_2_3", "container_x_0001_01_000002",
		"container_e_1_0001_01_000002", "container_1_0001_01_-2", "container_1_0001_01_2_3",
		"container_1_99999999999_01_2", "container_1_1_1_1099511627776", "container_e8388608_1_1_1_1",
		"container_+1_0001_01_000002",
	} {
		_, err := ParseContainerID(bad)
		var ie *IDError
		require.ErrorAs(t, err, &ie, bad)
		assert.Equal(t, "container", ie.Kind)
		assert.Contains(t, err.Error(), "want container_[e<epoch>_]")
	}
	var c ContainerID
	require.NoError(t, c.UnmarshalText([]byte("container_e03_1_0002_01_000004")))
	b, err := c.MarshalText()
	require.NoError(t, err)
	assert.Equal(t, "container_e03_1_0002_01_000004", string(b))
	assert.Error(t, c.UnmarshalText([]byte("nope")))
}

func TestApplicationIDs(t *testing.T) {
	id, err := ParseApplicationID("application_1700000000000_0001")
	require.NoError(t, err)
	assert.Equal(t, ApplicationID{ClusterTimestamp: 1700000000000, ID: 1}, id)
	assert.Equal(t, "application_1700000000000_0001", id.String())
	assert.Equal(t, "application_1_12345", ApplicationID{ClusterTimestamp: 1, ID: 12345}.String())
	for _, bad := range []string{"", "application_1", "application_1_2_3", "application_x_1", "application_1_x",
		"application_1_2147483648", "app_1_1", "application_-1_1", "application_1_ 1"} {
		_, err := ParseApplicationID(bad)
		assert.Error(t, err, bad)
	}
	att, err := ParseApplicationAttemptID("appattempt_1700000000000_0001_000002")
	require.NoError(t, err)
	assert.Equal(t, ApplicationAttemptID{Application: id, Attempt: 2}, att)
	assert.Equal(t, "appattempt_1700000000000_0001_000002", att.String())
	_, err = ParseApplicationAttemptID("appattempt_1_1")
	assert.ErrorContains(t, err, "want appattempt_")
	var a ApplicationID
	require.NoError(t, a.UnmarshalText([]byte("application_5_0007")))
	assert.Equal(t, ApplicationID{ClusterTimestamp: 5, ID: 7}, a)
	assert.True(t, ApplicationID{}.IsZero())
}

// TestIDOrderIsNumeric: ids sort by their numbers, not their strings.
func TestIDOrderIsNumeric(t *testing.T) {
	parse := func(s string) ApplicationID {
		id, err := ParseApplicationID(s)
		require.NoError(t, err)
		return id
	}
	ids := []ApplicationID{parse("application_2_0001"), parse("application_1_10000"), parse("application_1_9999")}
	slices.SortFunc(ids, ApplicationID.Compare)
	assert.Equal(t, []string{"application_1_9999", "application_1_10000", "application_2_0001"},
		[]string{ids[0].String(), ids[1].String(), ids[2].String()})

	c1, err := ParseContainerID("container_1_0001_01_999999")
	require.NoError(t, err)
	c2, err := ParseContainerID("container_1_0001_01_1000000")
	require.NoError(t, err)
	c3, err := ParseContainerID("container_e01_1_0001_01_000001")
	require.NoError(t, err)
	assert.Equal(t, -1, c1.Compare(c2))
	assert.Equal(t, -1, c2.Compare(c3), "a later epoch sorts after")
	assert.Equal(t, 0, c3.Compare(c3))
	a1 := ApplicationAttemptID{Application: parse("application_1_0001"), Attempt: 2}
	assert.Equal(t, 1, a1.Compare(ApplicationAttemptID{Application: parse("application_1_0001"), Attempt: 1}))
}
