package app

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
)

// maxDeviceQueries bounds the NodeManagers asked at once, and deviceTimeout each question.
const (
	maxDeviceQueries = 8
	deviceTimeout    = 10 * time.Second
)

// nodeResourcer is the part of the RM client gpuDevices uses.
type nodeResourcer interface {
	NodeResource(ctx context.Context, nodeHTTPAddress, resource string) (*yarn.NodeDevices, error)
}

// fillGPUDevices sets the GPUs each running container with GPUs holds, as its NodeManager's GPU
// plugin reports them (GET /ws/v1/node/resources/yarn.io%2Fgpu, one question per NodeManager).
// A NodeManager that reports no assignments (no GPU plugin, or no LinuxContainerExecutor), or
// does not answer, leaves its containers as they are: the devices are extra information.
func fillGPUDevices(ctx context.Context, nr nodeResourcer, containers []view.AppContainer) {
	byNode := map[string][]int{}
	for i, c := range containers {
		if c.GPUs > 0 && c.State == "RUNNING" && c.NodeHTTP != "" {
			byNode[c.NodeHTTP] = append(byNode[c.NodeHTTP], i)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxDeviceQueries)
	for node, idx := range byNode {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			qctx, cancel := context.WithTimeout(ctx, deviceTimeout)
			defer cancel()
			nd, err := nr.NodeResource(qctx, node, records.GPU)
			if err != nil || !nd.Assignments {
				return
			}
			uuid := map[int64]string{}
			for _, d := range nd.Devices {
				uuid[d.MinorNumber] = d.UUID
			}
			mu.Lock()
			defer mu.Unlock()
			for _, i := range idx {
				for _, a := range nd.HeldBy(containers[i].ID) {
					containers[i].GPUDevices = append(containers[i].GPUDevices,
						view.AssignedGPU{Index: a.Index, MinorNumber: a.MinorNumber, UUID: uuid[a.MinorNumber]})
				}
			}
		})
	}
	wg.Wait()
}

// writeGPUDevices writes, under the containers table, the GPUs the NodeManagers report each
// container holds (nothing when none reports).
func writeGPUDevices(w io.Writer, containers []view.AppContainer) error {
	ew := &cmdutil.ErrWriter{W: w}
	first := true
	for _, c := range containers {
		for _, d := range c.GPUDevices {
			if first {
				ew.Printf("\nGPUs held, as the NodeManagers report them:\n")
				first = false
			}
			id := d.UUID
			if id == "" {
				id = "-"
			}
			ew.Printf("  %s  minor %d  %s\n", p(c.ID), d.MinorNumber, p(id))
		}
	}
	return ew.Err
}
