// Command yarn-er makes Flink's external resources (GPUs, FPGAs and any custom resource type) work on
// Hadoop YARN: it translates Flink's configuration into the YARN container request, checks a cluster
// before a job is submitted, inspects the cluster, and discovers devices inside containers.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	args := os.Args[1:]
	if isDiscoverArgv0(os.Args[0]) {
		// Started as Flink's discovery script (a symlink named nvidia-gpu-discovery.sh or
		// yarn-er-discover): behave exactly like `yarn-er discover`.
		args = append([]string{"discover"}, args...)
	}
	code := Main(ctx, args, Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, os.Getenv)
	stop()
	os.Exit(code)
}
