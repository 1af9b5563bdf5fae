package preflight

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// Synthesised ResourceManager answers in the shapes Hadoop 3.5 sends (see yarn/yarnfake/captures), for
// clusters the mini-YARN cannot be: busy, uneven, with units, thousands of nodes.

// rtype is a resource type as the RM lists it.
type rtype struct{ name, units string }

// stdTypes are memory-mb, vcores, yarn.io/gpu and yarn.io/fpga.
var stdTypes = []rtype{{"memory-mb", "Mi"}, {"vcores", ""}, {"yarn.io/gpu", ""}, {"yarn.io/fpga", ""}}

// synthNode is one node: its state, total and used resources by type name.
type synthNode struct {
	id          string
	state       string
	total, used map[string]int64
	labels      []string
}

// writeResource writes one Hadoop ResourceInfo object listing every type.
func writeResource(b *bytes.Buffer, types []rtype, values map[string]int64) {
	fmt.Fprintf(b, `{"memory":%d,"vCores":%d,"resourceInformations":{"resourceInformation":[`, values["memory-mb"], values["vcores"])
	for i, t := range types {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, `{"maximumAllocation":9223372036854775807,"minimumAllocation":0,"name":%q,"resourceType":"COUNTABLE","units":%q,"value":%d}`,
			t.name, t.units, values[t.name])
	}
	b.WriteString(`]}}`)
}

// nodesBody renders /ws/v1/cluster/nodes with yarnfake's writer, every node listing every type.
func nodesBody(types []rtype, nodes []synthNode) []byte {
	amounts := func(values map[string]int64) []yarnfake.Resource {
		out := make([]yarnfake.Resource, len(types))
		for i, t := range types {
			out[i] = yarnfake.Resource{Name: t.name, Units: t.units, Value: values[t.name]}
		}
		return out
	}
	list := make([]yarnfake.Node, len(nodes))
	for i, n := range nodes {
		list[i] = yarnfake.Node{ID: n.id, State: n.state, Total: amounts(n.total), Used: amounts(n.used), Labels: n.labels}
	}
	body, err := yarnfake.Nodes(list)
	if err != nil {
		panic(err) // a test's own cluster: a bad one is the test's bug
	}
	return body
}

// uniformNodes returns n RUNNING nodes with the same total and nothing used.
func uniformNodes(n int, total map[string]int64) []synthNode {
	out := make([]synthNode, n)
	for i := range out {
		out[i] = synthNode{id: "host" + strconv.Itoa(i) + ":45454", state: "RUNNING", total: total, used: map[string]int64{}}
	}
	return out
}

// infoBody renders /ws/v1/cluster/info for a Hadoop version.
func infoBody(version string) []byte {
	return []byte(fmt.Sprintf(`{"clusterInfo":{"id":1,"startedOn":1,"state":"STARTED","haState":"ACTIVE","resourceManagerVersion":%q,"hadoopVersion":%q}}`, version, version))
}

// synthQueue is a CapacityScheduler queue.
type synthQueue struct {
	name     string
	maxAlloc map[string]int64 // nil: not reported
	children []synthQueue
	// maxCap and used are the queue's maxEffectiveCapacity and resourcesUsed (nil: not reported).
	maxCap, used map[string]int64
	// amLimit and amUsed are AMResourceLimit (also given as userAMResourceLimit) and
	// usedAMResource (nil: not reported).
	amLimit, amUsed map[string]int64
	// labels are the queue's accessible node labels (nil: not reported).
	labels []string
	// minCap is minEffectiveCapacity (nil: not reported); userLimits, when set, are
	// userLimitFactor and userLimit.
	minCap     map[string]int64
	userLimits *[2]float64
	// users are active users (each with one running application).
	users []string
	// partitions are capacities per node label: effectiveMinResource and effectiveMaxResource.
	partitions map[string][2]map[string]int64
	// defaultLabel is defaultNodeLabelExpression ("": not reported).
	defaultLabel string
}

// schedulerBody renders /ws/v1/cluster/scheduler for a CapacityScheduler whose root has the
// given children and maximum allocation.
func schedulerBody(types []rtype, maxAlloc map[string]int64, children []synthQueue) []byte {
	var b bytes.Buffer
	b.WriteString(`{"scheduler":{"schedulerInfo":{"type":"capacityScheduler","capacity":100.0,"usedCapacity":0.0,"maxCapacity":100.0,"queueName":"root","queuePath":"root",`)
	writeQueues(&b, types, "root", children)
	writeResourceField(&b, types, "maximumAllocation", maxAlloc)
	b.WriteString(`}}}`)
	return b.Bytes()
}

// writeResourceField writes the field name with the resource r, nothing when r is nil (not
// reported).
func writeResourceField(b *bytes.Buffer, types []rtype, name string, r map[string]int64) {
	if r == nil {
		return
	}
	fmt.Fprintf(b, `,%q:`, name)
	writeResource(b, types, r)
}

func writeQueues(b *bytes.Buffer, types []rtype, parent string, qs []synthQueue) {
	b.WriteString(`"queues":{"queue":[`)
	for i, q := range qs {
		if i > 0 {
			b.WriteByte(',')
		}
		path := parent + "." + q.name
		kind := "capacitySchedulerLeafQueueInfo"
		if len(q.children) > 0 {
			kind = "capacitySchedulerQueueInfo"
		}
		fmt.Fprintf(b, `{"type":%q,"queuePath":%q,"queueName":%q,"capacity":100.0,"state":"RUNNING"`, kind, path, q.name)
		writeResourceField(b, types, "maximumAllocation", q.maxAlloc)
		writeResourceField(b, types, "maxEffectiveCapacity", q.maxCap)
		writeResourceField(b, types, "resourcesUsed", q.used)
		writeResourceField(b, types, "AMResourceLimit", q.amLimit)
		writeResourceField(b, types, "userAMResourceLimit", q.amLimit)
		writeResourceField(b, types, "minEffectiveCapacity", q.minCap)
		if q.userLimits != nil {
			fmt.Fprintf(b, `,"userLimitFactor":%g,"userLimit":%g`, q.userLimits[0], q.userLimits[1])
		}
		if q.defaultLabel != "" {
			fmt.Fprintf(b, `,"defaultNodeLabelExpression":%q`, q.defaultLabel)
		}
		if len(q.users) > 0 {
			b.WriteString(`,"users":{"user":[`)
			for i, u := range q.users {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(b, `{"username":%q,"numActiveApplications":1,"numPendingApplications":0}`, u)
			}
			b.WriteString(`]}`)
		}
		if q.partitions != nil {
			b.WriteString(`,"capacities":{"queueCapacitiesByPartition":[`)
			names := slices.Sorted(maps.Keys(q.partitions))
			for i, name := range names {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(b, `{"partitionName":%q,"effectiveMinResource":`, name)
				writeResource(b, types, q.partitions[name][0])
				b.WriteString(`,"effectiveMaxResource":`)
				writeResource(b, types, q.partitions[name][1])
				b.WriteByte('}')
			}
			b.WriteString(`]}`)
		}
		if q.labels != nil {
			labels, _ := json.Marshal(q.labels)
			fmt.Fprintf(b, `,"nodeLabels":%s`, labels)
		}
		writeResourceField(b, types, "usedAMResource", q.amUsed)
		if len(q.children) > 0 {
			b.WriteByte(',')
			writeQueues(b, types, path, q.children)
		}
		b.WriteByte('}')
	}
	b.WriteString(`]}`)
}

// synthCluster returns the bodies of a fake RM: Hadoop 3.5.0, the nodes, a root.default queue
// with maximum allocation max (per type), and no /conf.
func synthCluster(types []rtype, nodes []synthNode, max map[string]int64) map[string][]byte {
	return map[string][]byte{
		"/ws/v1/cluster/info":      infoBody("3.5.0"),
		"/ws/v1/cluster/nodes":     nodesBody(types, nodes),
		"/ws/v1/cluster/scheduler": schedulerBody(types, max, []synthQueue{{name: "default", maxAlloc: max}}),
	}
}

// bigMax is a maximum allocation that allows everything of the standard types.
var bigMax = map[string]int64{"memory-mb": 1 << 20, "vcores": 1 << 10, "yarn.io/gpu": 1 << 20, "yarn.io/fpga": 1 << 20}
