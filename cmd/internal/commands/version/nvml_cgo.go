//go:build linux && cgo

package version

// nvmlBuild says how this binary has NVML: the same build constraint as discovery/nvml_cgo.go, whose
// backend loads libnvidia-ml.so.1 with dlopen when discovery runs.
func nvmlBuild() (available bool, build string) { return true, "cgo" }
