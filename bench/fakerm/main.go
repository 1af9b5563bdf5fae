// Command fakerm serves a synthesised ResourceManager (yarn/yarnfake, SynthNodes, the shapes
// bench/servebench uses: 4 yarn.io/gpu and 2 yarn.io/fpga per node, every fourth node half busy,
// 20 racks) of N nodes until interrupted, printing its URL: for measuring a command against a
// large cluster by hand (`/usr/bin/time -v yarn-er cluster nodes -o json --rm URL`).
//
// usage: go run ./bench/fakerm -nodes 50000
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

func main() {
	nodes := flag.Int("nodes", 50000, "number of nodes")
	flag.Parse()
	// The spec of bench/servebench.
	spec := yarnfake.NodeSpec{Racks: 20, Used: func(i int) []yarnfake.Resource {
		if i%4 != 0 {
			return nil
		}
		return []yarnfake.Resource{{Name: "memory-mb", Value: 8192}, {Name: "vcores", Value: 20}, {Name: "yarn.io/gpu", Value: 2}}
	}}
	rm, err := yarnfake.NewServer(yarnfake.WithVersion("3.5.0"), yarnfake.WithNodes(*nodes, spec))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakerm:", err)
		os.Exit(1)
	}
	defer rm.Close()
	fmt.Println(rm.URL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
}
