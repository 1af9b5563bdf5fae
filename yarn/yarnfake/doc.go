// Package yarnfake is a fake Hadoop YARN ResourceManager for unit tests of code that talks to the
// RM REST API (/ws/v1/cluster, /conf): an httptest server that replays answers recorded from a
// real mini-YARN, synthesises clusters of any size, injects faults and records every request.
//
// It is for unit tests and fault injection only; integration tests run against the real
// mini-YARN (docker/mini-yarn). The style follows client-go's rest/fake and go-nvlib's mocks:
// behaviour is chosen per test, with no global state.
//
//	rm := yarnfake.New(t, yarnfake.WithVersion("3.4.2"), yarnfake.WithNodes(1000, yarnfake.NodeSpec{}))
//	rm.Fault("POST /ws/v1/cluster/apps", yarnfake.Fault{Status: 500, Times: 1})
//	client, err := yarn.NewClient(yarn.Options{Addresses: []string{rm.URL()}, User: "alice"})
//	...
//	require.Equal(t, 2, rm.Count("POST /ws/v1/cluster/apps"))
//
// # Captures
//
// The embedded captures (captures/hadoop-<version>/, written by capture.sh from a running
// docker/mini-yarn) are the RM's answers, byte for byte, with an index.txt that records each
// answer's status, content type, method and request path. Every Hadoop line the mini-YARN runs
// has a set; misconfigured/ holds the answers of the cluster from docker/conf-misconfigured (no
// GPU or FPGA resource types). Hadoop 3.1, which the mini-YARN cannot run, is covered by a
// hand-derived set (captures/hadoop-3.1-derived/, Derived true): shapes written from Hadoop's DAO
// sources, not recorded. Sets, LoadSet and LoadCapture read them.
//
// # Synthesised nodes
//
// SynthNodes writes N uniform nodes (a spec of totals, a used function, racks), for clusters
// of any size; Nodes writes a list of nodes each with its own id, state, totals, usage and
// labels, for uneven, busy or lost ones. Both write Hadoop 3.5's shape; WithNodes serves
// SynthNodes' answer, and Reply serves any body.
//
// # NodeManagers
//
// NewNodeManager starts a fake NodeManager web server for the container log endpoint that live
// logs are read from: SetLog serves a file's bytes, SetWrappedLog the same inside Hadoop 3.5's
// header and trailer, and any other log gets the NodeManager's 404.
//
// Package yarnfake does not import package yarn, so yarn's own tests can use it.
package yarnfake
