//go:build !linux || !cgo

package version

import "runtime"

// nvmlBuild says how this binary has NVML: the same build constraint as discovery/nvml_stub.go, whose
// backend always reports itself unavailable.
func nvmlBuild() (available bool, build string) {
	if runtime.GOOS != "linux" {
		return false, "unavailable (" + runtime.GOOS + " build)"
	}
	return false, "unavailable (CGO_ENABLED=0 build)"
}
