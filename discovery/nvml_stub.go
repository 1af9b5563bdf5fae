//go:build !linux || !cgo

package discovery

// nvmlCompiled says whether this binary can talk to NVML.
const nvmlCompiled = false

// newNVMLBackend stands in for NVML in builds without cgo (or off Linux): it is always unavailable, and
// the procfs and nvidia-smi backends take over.
func newNVMLBackend(string, Root) Backend {
	return skippedBackend{name: "nvml", reason: "this yarn-er was built without cgo, so it cannot load NVML"}
}
