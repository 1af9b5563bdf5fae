package yarn

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddressOption(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []string
		err  string
	}{
		{[]string{"rm1:8088,rm2:8088"}, []string{"http://rm1:8088", "http://rm2:8088"}, ""},
		{[]string{"https://rm1", "http://rm2/ws/v1/cluster/"}, []string{"https://rm1:8090", "http://rm2:8088"}, ""},
		{[]string{"rm1:8088", " rm1:8088 ", ""}, []string{"http://rm1:8088"}, ""},
		{[]string{"[::1]:8088"}, []string{"http://[::1]:8088"}, ""},
		{[]string{"ftp://rm"}, nil, "neither http nor https"},
		{[]string{"http://user:pw@rm:8088"}, nil, "credentials in the URL"},
		{[]string{"rm:99999"}, nil, "bad port"},
		{[]string{"http://rm:8088/?delegation=tok"}, nil, "?delegation= token is not used"},
		{[]string{"http://"}, nil, "no host"},
	} {
		c, err := NewClient(Options{Addresses: tc.in, User: "u"})
		if tc.err != "" {
			require.Error(t, err, tc.in)
			assert.Contains(t, err.Error(), tc.err)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, c.Addresses())
	}
	// HTTPS (yarn.http.policy=HTTPS_ONLY) applies to host:port addresses only.
	c, err := NewClient(Options{Addresses: []string{"rm:9443", "http://rm2:8088"}, HTTPS: true, User: "u"})
	require.NoError(t, err)
	assert.Equal(t, []string{"https://rm:9443", "http://rm2:8088"}, c.Addresses())

	// Without any address: ErrNoAddress.
	_, err = NewClient(Options{User: "u"})
	assert.ErrorIs(t, err, ErrNoAddress)
}

func TestRMIDsNameTheAddresses(t *testing.T) {
	rm1, rm2 := newFakeRM(t), newFakeRM(t)
	replyCapture(t, rm1, "GET /ws/v1/cluster/info", "info.json")
	replyCapture(t, rm2, "GET /ws/v1/cluster/info", "info.json")
	c, err := NewClient(Options{Addresses: []string{rm1.URL(), rm2.URL()}, RMIDs: []string{"rm1", "rm2"}, User: "u",
		Retry: RetryPolicy{MaxAttempts: 1}})
	require.NoError(t, err)
	sts := c.RMs(context.Background())
	require.Len(t, sts, 2)
	assert.Equal(t, "rm1", sts[0].ID)
	assert.Equal(t, rm1.URL(), sts[0].Address)
	assert.Equal(t, "rm2", sts[1].ID)

	_, err = NewClient(Options{Addresses: []string{rm1.URL()}, RMIDs: []string{"rm1", "rm2"}, User: "u"})
	assert.ErrorContains(t, err, "2 RM ids for 1 ResourceManager addresses")
}

func TestRequestURLKeepsEscapes(t *testing.T) {
	rm, c := replayRM(t, "GET /ws/v1/cluster/nodes/host:1", "node.json")
	_, err := c.Node(context.Background(), "host:1")
	require.NoError(t, err)
	_, err = c.Node(context.Background(), "a/b")
	require.ErrorIs(t, err, ErrNotFound)
	reqs := rm.Requests()
	assert.Equal(t, "/ws/v1/cluster/nodes/a/b", reqs[1].Path, "the id is escaped on the wire, decoded by the server")
}
