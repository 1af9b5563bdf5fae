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
	code := Main(ctx, os.Args[1:], Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, os.Getenv)
	stop()
	os.Exit(code)
}
