//go:build unix && !linux

package discovery

// sharedFileSystem reports no shared file system: the check reads Linux's statfs types.
func sharedFileSystem(int) string { return "" }
