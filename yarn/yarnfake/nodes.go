package yarnfake

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Resource is one resource type's amount on a node.
type Resource struct {
	// Name is the resource type, e.g. "memory-mb", "vcores", "yarn.io/gpu".
	Name string
	// Units is Hadoop's unit ("Mi" for memory-mb, "" for counts); empty means the type's
	// default ("Mi" for memory-mb, "" otherwise).
	Units string
	// Value is the amount in Units.
	Value int64
}

// HarnessNode is the resource of one mini-YARN NodeManager (docker/conf): 16384 MB, 40 vcores,
// 4 GPUs, 2 FPGAs.
func HarnessNode() []Resource {
	return []Resource{
		{Name: "memory-mb", Units: "Mi", Value: 16384},
		{Name: "vcores", Value: 40},
		{Name: "yarn.io/gpu", Value: 4},
		{Name: "yarn.io/fpga", Value: 2},
	}
}

// NodeSpec describes the nodes SynthNodes writes.
type NodeSpec struct {
	// Total is every node's total resource, in this order; nil means HarnessNode().
	Total []Resource
	// Used, if set, gives node i's used resources by type (the rest of Total is available);
	// nil means idle nodes. A type missing from the result is unused.
	Used func(i int) []Resource
	// State is every node's state (default "RUNNING"); a node the scheduler does not hold reports
	// no usedResource and availableResource (see Node.State).
	State string
	// Version is every node's Hadoop version (default DefaultVersion).
	Version string
	// Racks spreads the nodes round-robin over this many racks ("/rack-0", ...); 0 puts them
	// all in "/default-rack".
	Racks int
	// NoTotal leaves totalResource out, as Hadoop 3.1 does (total = used + available).
	NoTotal bool
}

// ErrBadSpec is returned by SynthNodes for a spec it cannot write.
var ErrBadSpec = errors.New("yarnfake: bad node spec")

// SynthNodes writes a /ws/v1/cluster/nodes answer of n nodes in the shape Hadoop 3.5 records
// (every field of a captured node, resources with Long.MAX_VALUE maximumAllocation). Node i is
// "node<i, 5 digits>.example.com:45454".
func SynthNodes(n int, spec NodeSpec) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("%w: %d nodes", ErrBadSpec, n)
	}
	total := append([]Resource(nil), spec.Total...)
	if spec.Total == nil {
		total = HarnessNode()
	}
	if err := checkTotal(total, "Total"); err != nil {
		return nil, err
	}
	w := newNodesWriter(n, spec.NoTotal)
	for i := range n {
		nd := Node{State: spec.State, Version: spec.Version, Total: total}
		if spec.Used != nil {
			nd.Used = spec.Used(i)
		}
		if spec.Racks > 0 {
			nd.Rack = "/rack-" + strconv.Itoa(i%spec.Racks)
		}
		if err := w.node(i, nd); err != nil {
			return nil, err
		}
	}
	return w.done(), nil
}

// Node is one node of the answer Nodes writes, for clusters NodeSpec's uniform nodes cannot
// describe: uneven, busy, lost or labelled ones.
type Node struct {
	// ID is the node id, host:port; "" means node<i, 5 digits>.example.com:45454 for node i.
	ID string
	// State is the node's state ("" means RUNNING). As in Hadoop, only a node the scheduler holds
	// (RUNNING or DECOMMISSIONING) reports its containers, usedResource and availableResource.
	State string
	// Rack is the node's rack ("" means /default-rack).
	Rack string
	// Version is the node's Hadoop version ("" means DefaultVersion).
	Version string
	// Total is the node's total resource, in this order; nil means HarnessNode(). Units as in
	// NodeSpec.Total.
	Total []Resource
	// Used is the node's used resources by type (the rest of Total is available).
	Used []Resource
	// Labels are the node's labels (nodeLabels), none when empty.
	Labels []string
}

// Nodes writes a /ws/v1/cluster/nodes answer of nodes, in the shape of SynthNodes.
func Nodes(nodes []Node) ([]byte, error) {
	w := newNodesWriter(len(nodes), false)
	for i, nd := range nodes {
		if nd.Total == nil {
			nd.Total = HarnessNode()
		} else {
			nd.Total = append([]Resource(nil), nd.Total...)
		}
		if err := checkTotal(nd.Total, fmt.Sprintf("node %d Total", i)); err != nil {
			return nil, err
		}
		if err := w.node(i, nd); err != nil {
			return nil, err
		}
	}
	return w.done(), nil
}

// checkTotal refuses a duplicate or unnamed type and a negative value, and fills in memory-mb's
// default unit.
func checkTotal(total []Resource, what string) error {
	seen := map[string]bool{}
	for i, r := range total {
		if r.Name == "" || seen[r.Name] || r.Value < 0 {
			return fmt.Errorf("%w: %s[%d] %q: want a unique name and a value >= 0", ErrBadSpec, what, i, r.Name)
		}
		seen[r.Name] = true
		if r.Units == "" && r.Name == "memory-mb" {
			total[i].Units = "Mi"
		}
	}
	return nil
}

// nodesWriter writes the nodes of one answer.
type nodesWriter struct {
	b       bytes.Buffer
	noTotal bool
	used    []int64 // node's scratch: the used amount of each type of its Total
}

func newNodesWriter(n int, noTotal bool) *nodesWriter {
	w := &nodesWriter{noTotal: noTotal}
	w.b.Grow(n * 1700)
	w.b.WriteString(`{"nodes":{"node":[`)
	return w
}

// node writes node i (its Total checked).
func (w *nodesWriter) node(i int, nd Node) error {
	total := nd.Total
	if cap(w.used) < len(total) {
		w.used = make([]int64, len(total))
	}
	used := w.used[:len(total)]
	clear(used)
	for _, u := range nd.Used {
		k := indexOf(total, u.Name)
		if k < 0 || u.Value < 0 || u.Value > total[k].Value {
			return fmt.Errorf("%w: node %d uses %d of %q, which it does not have", ErrBadSpec, i, u.Value, u.Name)
		}
		used[k] = u.Value
	}
	state, version, rack := cmp.Or(nd.State, "RUNNING"), cmp.Or(nd.Version, DefaultVersion), cmp.Or(nd.Rack, "/default-rack")
	id := nd.ID
	if id == "" {
		id = fmt.Sprintf("node%05d.example.com:45454", i)
	}
	host, _, _ := strings.Cut(id, ":")
	// Hadoop's NodeInfo takes the containers and the used and available resources from the
	// scheduler's report of the node, which only a node the scheduler holds has.
	scheduled := state == "RUNNING" || state == "DECOMMISSIONING"
	mem, vc := valueOf(total, used, "memory-mb"), valueOf(total, used, "vcores")
	if !scheduled {
		mem, vc = [2]int64{}, [2]int64{}
	}
	if i > 0 {
		w.b.WriteByte(',')
	}
	fmt.Fprintf(&w.b, `{"rack":%s,"state":%s,"id":%s,"nodeHostName":%s,"nodeHTTPAddress":%s,"lastHealthUpdate":1796033172368,"version":%s,"healthReport":"","numContainers":%d,"usedMemoryMB":%d,"availMemoryMB":%d,"usedVirtualCores":%d,"availableVirtualCores":%d,"memUtilization":0.0,"cpuUtilization":0.0,"numRunningOpportContainers":0,"usedMemoryOpportGB":0,"usedVirtualCoresOpport":0,"numQueuedContainers":0,`,
		jsonString(rack), jsonString(state), jsonString(id), jsonString(host), jsonString(host+":8042"), jsonString(version), vc[0], mem[0], mem[1], vc[0], vc[1])
	if len(nd.Labels) > 0 {
		labels, err := json.Marshal(nd.Labels)
		if err != nil {
			return fmt.Errorf("%w: node %d labels: %v", ErrBadSpec, i, err)
		}
		fmt.Fprintf(&w.b, `"nodeLabels":%s,`, labels)
	}
	w.b.WriteString(`"allocationTags":{},"resourceUtilization":{"nodePhysicalMemoryMB":0,"nodeVirtualMemoryMB":0,"nodeCPUUsage":0.0,"aggregatedContainersPhysicalMemoryMB":0,"aggregatedContainersVirtualMemoryMB":0,"containersCPUUsage":0.0}`)
	if scheduled {
		w.b.WriteString(`,"usedResource":`)
		writeResource(&w.b, total, func(k int) int64 { return used[k] })
		w.b.WriteString(`,"availableResource":`)
		writeResource(&w.b, total, func(k int) int64 { return total[k].Value - used[k] })
	}
	if !w.noTotal {
		w.b.WriteString(`,"nodeAttributesInfo":{},"totalResource":`)
		writeResource(&w.b, total, func(k int) int64 { return total[k].Value })
	}
	w.b.WriteByte('}')
	return nil
}

func (w *nodesWriter) done() []byte {
	w.b.WriteString(`]}}`)
	return w.b.Bytes()
}

func indexOf(rs []Resource, name string) int {
	for k, r := range rs {
		if r.Name == name {
			return k
		}
	}
	return -1
}

// valueOf returns the used and available amounts of name (0, 0 if the node lacks it).
func valueOf(total []Resource, used []int64, name string) [2]int64 {
	k := indexOf(total, name)
	if k < 0 {
		return [2]int64{}
	}
	return [2]int64{used[k], total[k].Value - used[k]}
}

// writeResource writes a ResourceInfo: memory and vCores, then every type's resourceInformation.
func writeResource(b *bytes.Buffer, total []Resource, value func(k int) int64) {
	mem, vc := int64(0), int64(0)
	if k := indexOf(total, "memory-mb"); k >= 0 {
		mem = value(k)
	}
	if k := indexOf(total, "vcores"); k >= 0 {
		vc = value(k)
	}
	fmt.Fprintf(b, `{"memory":%d,"vCores":%d,"resourceInformations":{"resourceInformation":[`, mem, vc)
	for k, r := range total {
		if k > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, `{"maximumAllocation":9223372036854775807,"minimumAllocation":0,"name":%s,"resourceType":"COUNTABLE","units":%s,"value":%d}`,
			jsonString(r.Name), jsonString(r.Units), value(k))
	}
	b.WriteString(`]}}`)
}

// jsonString is s as a JSON string (Go's %q is not JSON for control characters and non-UTF-8).
func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b)
}
