package yarn

import "unique"

// intern returns the canonical copy of s (package unique): the strings every node and resource
// entry repeats (resource names and units, states, racks, versions) are kept once, not once per
// node — about half of a 50,000-node list's memory.
func intern(s string) string {
	if s == "" {
		return ""
	}
	return unique.Make(s).Value()
}
