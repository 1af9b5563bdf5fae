//go:build !linux || !cgo

package discovery

import "context"

// nvmlCompiled says whether this binary can talk to NVML.
const nvmlCompiled = false

// nvmlStub stands in for NVML in builds without cgo (or off Linux): it is always unavailable, and the
// procfs and nvidia-smi backends take over.
type nvmlStub struct{}

func newNVMLBackend(string, Root) Backend { return nvmlStub{} }

func (nvmlStub) Name() string { return "nvml" }

func (nvmlStub) Probe(context.Context) (bool, string) {
	return false, "this yarn-er was built without cgo, so it cannot load NVML"
}

func (nvmlStub) Devices(context.Context) ([]Device, error) {
	return nil, unavailable("this yarn-er was built without cgo, so it cannot load NVML")
}
