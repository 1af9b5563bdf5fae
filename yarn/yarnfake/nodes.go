package yarnfake

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
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
	// State is every node's state (default "RUNNING").
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
	seen := map[string]bool{}
	for i, r := range total {
		if r.Name == "" || seen[r.Name] || r.Value < 0 {
			return nil, fmt.Errorf("%w: Total[%d] %q: want a unique name and a value >= 0", ErrBadSpec, i, r.Name)
		}
		seen[r.Name] = true
		if r.Units == "" && r.Name == "memory-mb" {
			total[i].Units = "Mi"
		}
	}
	state, version := spec.State, spec.Version
	if state == "" {
		state = "RUNNING"
	}
	if version == "" {
		version = DefaultVersion
	}
	var b bytes.Buffer
	b.Grow(n * 1700)
	b.WriteString(`{"nodes":{"node":[`)
	used := make([]int64, len(total))
	for i := range n {
		for k := range used {
			used[k] = 0
		}
		if spec.Used != nil {
			for _, u := range spec.Used(i) {
				k := indexOf(total, u.Name)
				if k < 0 || u.Value < 0 || u.Value > total[k].Value {
					return nil, fmt.Errorf("%w: node %d uses %d of %q, which it does not have", ErrBadSpec, i, u.Value, u.Name)
				}
				used[k] = u.Value
			}
		}
		if i > 0 {
			b.WriteByte(',')
		}
		rack := "/default-rack"
		if spec.Racks > 0 {
			rack = "/rack-" + strconv.Itoa(i%spec.Racks)
		}
		host := fmt.Sprintf("node%05d.example.com", i)
		mem, vc := valueOf(total, used, "memory-mb"), valueOf(total, used, "vcores")
		fmt.Fprintf(&b, `{"rack":%q,"state":%q,"id":"%s:45454","nodeHostName":"%s","nodeHTTPAddress":"%s:8042","lastHealthUpdate":1796033172368,"version":%q,"healthReport":"","numContainers":%d,"usedMemoryMB":%d,"availMemoryMB":%d,"usedVirtualCores":%d,"availableVirtualCores":%d,"memUtilization":0.0,"cpuUtilization":0.0,"numRunningOpportContainers":0,"usedMemoryOpportGB":0,"usedVirtualCoresOpport":0,"numQueuedContainers":0,"allocationTags":{},"resourceUtilization":{"nodePhysicalMemoryMB":0,"nodeVirtualMemoryMB":0,"nodeCPUUsage":0.0,"aggregatedContainersPhysicalMemoryMB":0,"aggregatedContainersVirtualMemoryMB":0,"containersCPUUsage":0.0},"usedResource":`,
			rack, state, host, host, host, version, vc[0], mem[0], mem[1], vc[0], vc[1])
		writeResource(&b, total, func(k int) int64 { return used[k] })
		b.WriteString(`,"availableResource":`)
		writeResource(&b, total, func(k int) int64 { return total[k].Value - used[k] })
		if !spec.NoTotal {
			b.WriteString(`,"nodeAttributesInfo":{},"totalResource":`)
			writeResource(&b, total, func(k int) int64 { return total[k].Value })
		}
		b.WriteByte('}')
	}
	b.WriteString(`]}}`)
	return b.Bytes(), nil
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
		fmt.Fprintf(b, `{"maximumAllocation":9223372036854775807,"minimumAllocation":0,"name":%q,"resourceType":"COUNTABLE","units":%q,"value":%d}`,
			r.Name, r.Units, value(k))
	}
	b.WriteString(`]}}`)
}
