package amrm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
)

// wireAsk is one ResourceRequest as sent: resource name, count, relaxLocality, node label.
type wireAsk struct {
	name  string
	n     int32
	relax bool
	label string
}

func wireAsks(rrs []*yarnpb.ResourceRequestProto) []wireAsk {
	var out []wireAsk
	for _, r := range rrs {
		out = append(out, wireAsk{r.GetResourceName(), r.GetNumContainers(), r.GetRelaxLocality(), r.GetNodeLabelExpression()})
	}
	return out
}

// TestAskOnRacksSendsAsAMRMClient checks the ResourceRequests of a rack-bound ask: per rack with
// relaxLocality true and the off-switch one with relaxLocality false (as Hadoop's AMRMClientImpl
// sends a ContainerRequest with racks and relaxLocality false), each for the whole count, and a
// rack dropped later sent with 0.
func TestAskOnRacksSendsAsAMRMClient(t *testing.T) {
	type step struct {
		n     int
		label string
		racks []string
	}
	tests := []struct {
		name  string
		steps []step
		want  [][]wireAsk
	}{
		{name: "no racks: anywhere", steps: []step{{n: 2}},
			want: [][]wireAsk{{{"*", 2, true, ""}}}},
		{name: "one rack", steps: []step{{n: 3, racks: []string{"/default-rack"}}},
			want: [][]wireAsk{{{"/default-rack", 3, true, ""}, {"*", 3, false, ""}}}},
		{name: "two racks, sorted and deduplicated, the label on * only", steps: []step{{n: 2, label: "gpu", racks: []string{"/r2", "/r1", "/r2"}}},
			want: [][]wireAsk{{{"/r1", 2, true, ""}, {"/r2", 2, true, ""}, {"*", 2, false, "gpu"}}}},
		{name: "count changes on every request",
			steps: []step{{n: 2, racks: []string{"/a"}}, {n: 1, racks: []string{"/a"}}},
			want:  [][]wireAsk{{{"/a", 2, true, ""}, {"*", 2, false, ""}}, {{"/a", 1, true, ""}, {"*", 1, false, ""}}}},
		{name: "racks change once nothing is outstanding: the old rack goes with 0",
			steps: []step{{n: 1, racks: []string{"/a"}}, {n: 0, racks: []string{"/a"}}, {n: 1, racks: []string{"/b"}}, {n: 1}},
			want: [][]wireAsk{{{"/a", 1, true, ""}, {"*", 1, false, ""}}, {{"/a", 0, true, ""}, {"*", 0, false, ""}},
				{{"/a", 0, true, ""}, {"/b", 1, true, ""}, {"*", 1, false, ""}}, nil}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rm := newRM(t, nil)
			c := registered(t, rm, nil)
			for i, s := range tc.steps {
				err := c.AskOnRacks(1, gpu1, s.n, s.label, s.racks)
				if i == 3 {
					// Other racks while one is outstanding: refused, nothing sent.
					require.ErrorContains(t, err, "one priority per set of racks")
				} else {
					require.NoError(t, err)
				}
				_, err = c.Allocate(context.Background())
				require.NoError(t, err)
				assert.Equal(t, tc.want[i], wireAsks(rm.AllocateRequests()[i].GetAsk()), "heartbeat %d", i)
			}
		})
	}
}

func TestAskOnRacksRefusesBadRacks(t *testing.T) {
	rm := newRM(t, nil)
	c := registered(t, rm, nil)
	for _, r := range []string{"", "*"} {
		assert.ErrorContains(t, c.AskOnRacks(1, gpu1, 1, "", []string{r}), "want a rack's network location")
	}
}
