package cluster

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
)

// NodesOptions are `cluster nodes`' flags.
type NodesOptions struct {
	cmdutil.Base
	Conn *cmdutil.ClusterConn
	// Resource is --resource: only nodes that have this resource type.
	Resource string
	// States is --state.
	States []string
}

// NewCmdNodes returns `yarn-er cluster nodes`; runF (nil: nodesRun) runs it.
func NewCmdNodes(f *cmdutil.Factory, runF func(*NodesOptions) error) *cobra.Command {
	opts := &NodesOptions{Base: cmdutil.Base{F: f}}
	cmd := &cobra.Command{
		Use:   "nodes",
		Short: "NodeManagers with memory, vcores and every extended resource (GPU, FPGA, ...): used/available/total",
		Example: `  yarn-er cluster nodes --rm http://rm:8088
  yarn-er cluster nodes --resource yarn.io/gpu --state RUNNING -o json`,
		Args: cobra.NoArgs,
		RunE: cmdutil.RunE(opts, runF, nodesRun),
	}
	opts.Conn = f.NewClusterConn(cmd)
	cmd.Flags().StringVar(&opts.Resource, "resource", "", "only nodes that have this resource (value above 0), e.g. yarn.io/gpu")
	cmd.Flags().StringSliceVar(&opts.States, "state", nil,
		"only nodes in these states (comma-separated): "+strings.Join(nodeStates, ", "))
	_ = cmd.RegisterFlagCompletionFunc("resource", cmdutil.FixedCompletion(records.GPU, records.FPGA, "nvidia.com/gpu"))
	_ = cmd.RegisterFlagCompletionFunc("state", cmdutil.FixedCompletion(nodeStates...))
	return cmd
}

func nodesRun(opts *NodesOptions) error {
	if err := checkStates(opts.States, nodeStates); err != nil {
		return err
	}
	c, err := opts.Conn.RMClient()
	if err != nil {
		return err
	}
	tab, err := c.NodeTable(opts.Ctx, yarn.NodesQuery{States: opts.States}, 0)
	if err != nil {
		return err
	}
	if err := checkResourceKnown(opts.Resource, tab); err != nil {
		return err
	}
	if opts.F.Output == cmdutil.OutputJSON {
		// One node at a time: the same bytes as Render's, without the whole document in memory.
		bw := bufio.NewWriterSize(opts.F.IO.Out, 64<<10)
		if err := view.WriteNodesJSON(bw, cmdutil.WriteJSON, tab, opts.Resource); err != nil {
			return err
		}
		return bw.Flush()
	}
	nodes := tab.Nodes()
	out := view.NodesOf(nodes, opts.Resource)
	return opts.F.Render(out, func(w io.Writer) error { return writeNodesTable(w, out, nodes) })
}

// checkResourceKnown returns a usage error when --resource names a type that none of nodes
// reports at all (not even as 0), suggesting the nearest type they do report: a typo would
// otherwise print "(no nodes)" and succeed. Without nodes nothing can be said.
func checkResourceKnown(resource string, nodes *yarn.NodeTable) error {
	if resource == "" || nodes.Len() == 0 {
		return nil
	}
	known := map[string]bool{}
	for i := range nodes.Len() {
		for _, e := range nodes.Total(i).All() {
			known[e.Name] = true
		}
	}
	if known[resource] {
		return nil
	}
	names := slices.Sorted(maps.Keys(known))
	msg := fmt.Sprintf("--resource %q: no node has a resource of that type", resource)
	if s := nearest(resource, names); s != "" {
		msg += "; did you mean " + s + "?"
	}
	return cmdutil.Usagef("%s (types the nodes report: %s)", msg, strings.Join(names, ", "))
}

// writeNodesTable writes one row per node and one column per resource type; each cell is
// used/available/total in the resource's unit (shown after the total when there is one).
func writeNodesTable(w io.Writer, out view.Nodes, nodes []yarn.Node) error {
	var units records.Resources // every resource type of the nodes, with its unit
	for _, n := range nodes {
		for _, e := range n.Total.All() {
			units.Set(e.Name, records.Quantity{Units: e.Units})
		}
	}
	names := view.ResourceMap(units).Names()
	tw := cmdutil.NewTable(w)
	// Every cell from the RM is escaped: resource type names, units, node ids and racks come
	// from the cluster's configuration and its NodeManagers.
	p := cmdutil.Printable
	header := []string{"NODE", "STATE", "RACK"}
	for _, name := range names {
		header = append(header, p(name))
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, n := range out.Nodes {
		row := []string{p(n.ID), p(n.State), p(n.Rack)}
		for _, name := range names {
			row = append(row, fmt.Sprintf("%s/%s/%s", cell(n.Used, name), cell(n.Available, name), cell(n.Total, name)+p(view.ResourceMap(units).Quantity(name).Units)))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(out.Nodes) == 0 {
		_, err := fmt.Fprintln(w, "(no nodes)")
		return err
	}
	_, err := fmt.Fprintln(w, "resources: used/available/total, in each resource's unit")
	return err
}

// cell is a resource's value in r, or "-" when r does not report it.
func cell(r view.ResourceMap, name string) string {
	q, ok := records.Resources(r).Quantity(name)
	if !ok {
		return "-"
	}
	return strconv.FormatInt(q.Value, 10)
}
