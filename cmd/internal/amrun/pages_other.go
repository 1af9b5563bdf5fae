//go:build !linux

package amrun

// releaseBinaryPages does nothing outside Linux (YARN's NodeManagers run on Linux).
func releaseBinaryPages() int64 { return 0 }
