package submit

import (
	"cmp"
	"context"
	"slices"
)

// RankState is one rank of a running yarn-er application as its ApplicationMaster's log tells:
// the rank's latest container.
type RankState struct {
	// Role is the rank's role (jobspec.DefaultRole for a job without roles); Rank is within it.
	Role string
	Rank int
	// Container and Node are the rank's latest container and its NodeManager.
	Container string
	Node      string
	// Launches is how many containers the rank was started in (restarts + 1).
	Launches int
	// Live says the ResourceManager lists the container among the attempt's live ones.
	Live bool
}

// Ranks reads the ranks of a running application from its ApplicationMaster's log (on its
// NodeManager), ordered by role name and rank. The error says why
// the log could not be read.
func (c *Client) Ranks(ctx context.Context, st *Status) ([]RankState, error) {
	t, err := c.liveRanks(ctx, st)
	if err != nil {
		return nil, err
	}
	live := map[string]bool{}
	for _, ct := range st.Containers {
		live[ct.ID] = true
	}
	type key struct {
		role string
		rank int
	}
	latest := map[key]RankState{}
	for _, rs := range t {
		k := key{rs.RoleName(), rs.Rank}
		cur, ok := latest[k]
		if !ok || rs.Launch > cur.Launches || rs.Launch == cur.Launches && rs.Container > cur.Container {
			latest[k] = RankState{Role: k.role, Rank: rs.Rank, Container: rs.Container, Node: rs.Node, Launches: rs.Launch, Live: live[rs.Container]}
		}
	}
	out := make([]RankState, 0, len(latest))
	for _, r := range latest {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b RankState) int {
		return cmp.Or(cmp.Compare(a.Role, b.Role), cmp.Compare(a.Rank, b.Rank))
	})
	return out, nil
}
