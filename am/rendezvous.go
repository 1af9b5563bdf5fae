package am

import (
	"encoding/json"
	"hash/fnv"
	"net"
	"strconv"

	"github.com/yarn-er/yarn-er/amrm"
	"github.com/yarn-er/yarn-er/jobspec"
)

// The rendezvous (docs/jobs.md#rendezvous). Every rank gets, counted within its role, RANK,
// WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, NODE_RANK, MASTER_ADDR and MASTER_PORT (rank 0's
// host and port), YARN_ER_PORT (its own port), YARN_ER_PEERS (a file listing every rank that
// has a container) and, in roles of framework tensorflow, TF_CONFIG.
//
// Ports: YARN reserves no port on a NodeManager, and the AM has no channel back from a running
// container, so the AM chooses each rank's port itself: PortBase + (a hash of the application
// id + the rank's index in the job) mod PortSpan, below Linux's ephemeral range (32768-60999),
// so that no outgoing connection of the host holds it. Ranks of one job on one host get distinct
// ports (up to PortSpan ranks per job); a rank keeps its port when it is restarted, so a
// restarted rank 0 is found again at MASTER_ADDR (its new host) and the same MASTER_PORT. The
// program binds it (torch.distributed's TCPStore on rank 0 does); a port some other process of
// the host holds makes that bind fail, and the rank fails (and is restarted, per restarts).

// Port range of the ranks' ports.
const (
	PortBase = 20000
	PortSpan = 12768
)

// PeersFile is the file, in each container's working directory, that lists the job's ranks:
// one line "ROLE RANK HOST PORT" per rank that had a container when this one was started (all
// of them for a gang).
const PeersFile = "yarn-er-peers"

// maxPeersBytes bounds the peers file, which goes through the launch command (bash -c takes
// 128 KiB in one argument): above it no file is written and YARN_ER_PEERS is not set.
const maxPeersBytes = 64 << 10

// MaxPeersRanks is the most ranks a job may have for the AM to write the peers file and TF_CONFIG:
// more would not fit maxPeersBytes anyway, and listing them for every start would cost the AM
// time quadratic in the job's size.
const MaxPeersRanks = 2048

// RankPort returns the port the AM chooses for the rank at index global of the job (all roles'
// ranks numbered in order) of application appID.
func RankPort(appID string, global int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(appID))
	return PortBase + int((uint64(h.Sum32())+uint64(global))%PortSpan)
}

// hostOf returns the host of a NodeManager's host:port.
func hostOf(node string) string {
	if h, _, err := net.SplitHostPort(node); err == nil {
		return h
	}
	return node
}

// hasContainer reports a rank that has (or holds) a container now.
func (s *slot) hasContainer() bool {
	return s.state == held || s.state == starting || s.state == running
}

// Peer is one rank as the peers file and TF_CONFIG list it.
type Peer struct {
	Role string
	Rank int
	Host string
	Port int
}

// peers returns every rank with a container, in job order, and s (which is being started).
func (r *runner) peers(s *slot) []Peer {
	var out []Peer
	for _, o := range r.slots {
		if o == s || o.hasContainer() {
			out = append(out, Peer{Role: o.role.spec.Name, Rank: o.rank, Host: hostOf(o.container.Node), Port: RankPort(r.opts.Identity.AppID, o.global)})
		}
	}
	return out
}

// rankLaunch returns the launch context of rank s in its container, with the rendezvous.
func (r *runner) rankLaunch(s *slot) *amrm.LaunchContext {
	role := s.role
	appID := r.opts.Identity.AppID
	env := make(map[string]string, len(r.spec.Env)+len(role.spec.Env)+16)
	// The Docker runtime's variables (the AM's own container stays plain: only ranks get them),
	// under the job's and the role's own variables, which win.
	for k, v := range r.spec.RoleDocker(role.spec).Env() {
		env[k] = v
	}
	for k, v := range r.spec.Env {
		env[k] = v
	}
	for k, v := range role.spec.Env {
		env[k] = v
	}
	n := len(role.slots)
	env[jobspec.EnvAppID] = appID
	env[jobspec.EnvContainerID] = s.container.ID.String()
	env[jobspec.EnvRole] = role.spec.Name
	env[jobspec.EnvRank] = strconv.Itoa(s.rank)
	env[jobspec.EnvWorldSize] = strconv.Itoa(n)
	env[jobspec.EnvTorchRank] = strconv.Itoa(s.rank)
	env[jobspec.EnvTorchWorld] = strconv.Itoa(n)
	port := RankPort(appID, s.global)
	env[jobspec.EnvPort] = strconv.Itoa(port)

	// Nodes in the order of their lowest rank of the role; local ranks within the node.
	var nodes []string
	local, localN := 0, 0
	for _, o := range role.slots {
		if o != s && !o.hasContainer() {
			continue
		}
		if !contains(nodes, o.container.Node) {
			nodes = append(nodes, o.container.Node)
		}
		if o.container.Node == s.container.Node {
			localN++
			if o.rank < s.rank {
				local++
			}
		}
	}
	env[jobspec.EnvNodeRank] = strconv.Itoa(index(nodes, s.container.Node))
	env[jobspec.EnvLocalRank] = strconv.Itoa(local)
	env[jobspec.EnvLocalWorldSize] = strconv.Itoa(localN)
	if m := role.slots[0]; m == s || m.hasContainer() {
		env[jobspec.EnvMasterAddr] = hostOf(m.container.Node)
		env[jobspec.EnvMasterPort] = strconv.Itoa(RankPort(appID, m.global))
	}

	pre := r.tokenFollowerWords()
	var peers []Peer
	var lines []string
	size := 0
	if len(r.slots) <= MaxPeersRanks {
		peers = r.peers(s)
		for _, p := range peers {
			l := p.Role + " " + strconv.Itoa(p.Rank) + " " + p.Host + " " + strconv.Itoa(p.Port)
			size += len(l) + 1
			lines = append(lines, l)
		}
	} else {
		size = maxPeersBytes + 1
	}
	if size <= maxPeersBytes {
		pre = append(pre, "printf", launchQuote(`%s\n`))
		for _, l := range lines {
			pre = append(pre, launchQuote(l))
		}
		pre = append(pre, ">"+PeersFile, "&&")
		env[jobspec.EnvPeers] = PeersFile
	} else if !r.peersWarned {
		r.peersWarned = true
		r.log.Warn("am: too many ranks for the peers file; YARN_ER_PEERS is not set", "ranks", len(r.slots), "limit", MaxPeersRanks)
	}
	if role.spec.Framework == jobspec.FrameworkTensorFlow && peers != nil {
		// TF_CONFIG holds JSON, whose quotes the NodeManager's `export K="V"` would break: it
		// is set by the launch command instead.
		pre = append(pre, "TF_CONFIG="+launchQuote(r.tfConfig(s, peers)))
	}
	return &amrm.LaunchContext{
		Commands:       RoleCommand(role.spec, pre),
		Environment:    env,
		LocalResources: localResources(r.spec),
		Credentials:    r.rm.Credentials(),
	}
}

// tfConfig is TF_CONFIG for rank s: every tensorflow role's host:port list (in rank order) and
// s's task.
func (r *runner) tfConfig(s *slot, peers []Peer) string {
	cluster := map[string][]string{}
	for _, role := range r.roles {
		if role.spec.Framework != jobspec.FrameworkTensorFlow {
			continue
		}
		list := []string{}
		for _, p := range peers {
			if p.Role == role.spec.Name {
				list = append(list, net.JoinHostPort(p.Host, strconv.Itoa(p.Port)))
			}
		}
		cluster[role.spec.Name] = list
	}
	b, _ := json.Marshal(struct {
		Cluster map[string][]string `json:"cluster"`
		Task    struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
		} `json:"task"`
	}{Cluster: cluster, Task: struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	}{s.role.spec.Name, s.rank}})
	return string(b)
}

func contains(list []string, s string) bool { return index(list, s) >= 0 }

func index(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// roleOfLog is the role attribute of a rank's log records ("" for a spec without roles).
func (r *runner) roleOfLog(s *slot) string {
	if len(r.spec.Roles) == 0 {
		return ""
	}
	return s.role.spec.Name
}
