package discovery

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// VisibleEntry is one item of a *_VISIBLE_DEVICES list: an index or a device id.
type VisibleEntry struct {
	// Index is the ordinal, or -1 when the entry is an id.
	Index int
	// MIG is the MIG index of a "G:M" entry (NVIDIA_VISIBLE_DEVICES), or -1.
	MIG int
	// ID is a device id or id prefix (GPU-…, MIG-…), "" for an index.
	ID string
}

// VisibleList is a parsed CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES or
// HIP_VISIBLE_DEVICES value.
type VisibleList struct {
	// All says every device is visible (the variable is unset, empty, or "all").
	All bool
	// Entries are the visible devices in the order given; empty with All false hides every device.
	Entries []VisibleEntry
	// Truncated says an entry was neither an index nor an id; CUDA and HIP ignore it and everything
	// after it.
	Truncated bool
	// Stopped is that entry.
	Stopped string
}

var (
	visibleIndexRE = regexp.MustCompile(`^[0-9]{1,5}$`)
	visibleMIGRE   = regexp.MustCompile(`^([0-9]{1,5}):([0-9]{1,5})$`)
	visibleIDRE    = regexp.MustCompile(`^(GPU|MIG)-[A-Za-z0-9/-]+$`)
)

// ParseVisibleDevices parses a visibility variable the way CUDA reads CUDA_VISIBLE_DEVICES: a
// comma-separated list of indices or GPU-/MIG- UUIDs (or unique prefixes of them), read up to the first
// entry that is neither ("-1" therefore hides every device). "" and "all" leave every device visible;
// "none" and "void" (the NVIDIA container runtime's words) hide all. "G:M" names MIG device M of GPU G.
func ParseVisibleDevices(s string) VisibleList {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "", "all":
		return VisibleList{All: true}
	case "none", "void", "nodevfiles":
		return VisibleList{}
	}
	var l VisibleList
	seen := map[string]bool{}
	for _, tok := range strings.Split(s, ",") {
		tok = strings.TrimSpace(tok)
		e := VisibleEntry{Index: -1, MIG: -1}
		switch {
		case visibleIndexRE.MatchString(tok):
			e.Index, _ = strconv.Atoi(tok)
		case visibleMIGRE.MatchString(tok):
			m := visibleMIGRE.FindStringSubmatch(tok)
			e.Index, _ = strconv.Atoi(m[1])
			e.MIG, _ = strconv.Atoi(m[2])
		case visibleIDRE.MatchString(tok):
			e.ID = tok
		default:
			l.Truncated, l.Stopped = true, tok
			return l
		}
		key := fmt.Sprintf("%d:%d:%s", e.Index, e.MIG, e.ID)
		if seen[key] {
			continue
		}
		seen[key] = true
		l.Entries = append(l.Entries, e)
	}
	return l
}

// matchID finds the device whose ID is id, or the only one whose ID starts with id.
func matchID(devs []Device, id string) (int, bool) {
	found := -1
	for i, d := range devs {
		if d.ID == id {
			return i, true
		}
		if strings.HasPrefix(d.ID, id) {
			if found >= 0 {
				return -1, false // ambiguous prefix
			}
			found = i
		}
	}
	return found, found >= 0
}

// selectOrdered applies a CUDA-, ROCR- or HIP-style list to devs: index entries are positions in devs,
// the result follows the list's order, and the first entry that names nothing ends the list (as the
// runtimes do).
func selectOrdered(devs []Device, l VisibleList, variable string) ([]Device, []string) {
	if l.All {
		return devs, nil
	}
	var warnings []string
	if l.Truncated {
		warnings = append(warnings, fmt.Sprintf("%s: %q is neither an index nor a device id; it and the entries after it are ignored", variable, l.Stopped))
	}
	out := []Device{}
	taken := map[int]bool{}
	for _, e := range l.Entries {
		i, ok := -1, false
		switch {
		case e.ID != "":
			i, ok = matchID(devs, e.ID)
		case e.MIG >= 0:
			for j, d := range devs {
				if d.MIG != nil && d.HostIndex == e.Index && d.MIG.Index == e.MIG {
					i, ok = j, true
					break
				}
			}
		default:
			i, ok = e.Index, e.Index < len(devs)
		}
		if !ok {
			warnings = append(warnings, fmt.Sprintf("%s: entry %s names no visible device; it and the entries after it are ignored", variable, entryString(e)))
			break
		}
		if !taken[i] {
			taken[i] = true
			out = append(out, devs[i])
		}
	}
	return out, warnings
}

// selectNVIDIAVisible applies NVIDIA_VISIBLE_DEVICES, which names devices of the host (indices in the
// host's enumeration, UUIDs, G:M for MIG) and keeps the host order. Inside a container the runtime has
// already applied it; when an index names a GPU this process does not see, the list is taken as applied.
func selectNVIDIAVisible(devs []Device, l VisibleList) ([]Device, []string) {
	if l.All {
		return devs, nil
	}
	var warnings []string
	if l.Truncated {
		warnings = append(warnings, fmt.Sprintf("NVIDIA_VISIBLE_DEVICES: %q is neither an index nor a device id; it and the entries after it are ignored", l.Stopped))
	}
	keep := map[int]bool{}
	for _, e := range l.Entries {
		switch {
		case e.ID != "":
			if i, ok := matchID(devs, e.ID); ok {
				keep[i] = true
			}
		default:
			found := false
			for i, d := range devs {
				if d.HostIndex != e.Index {
					continue
				}
				if e.MIG >= 0 && (d.MIG == nil || d.MIG.Index != e.MIG) {
					continue
				}
				keep[i], found = true, true
			}
			if !found {
				warnings = append(warnings, fmt.Sprintf("NVIDIA_VISIBLE_DEVICES: entry %s names no GPU of this host view; assuming the container runtime already applied the list", entryString(e)))
				return devs, warnings
			}
		}
	}
	out := []Device{}
	for i, d := range devs {
		if keep[i] {
			out = append(out, d)
		}
	}
	return out, warnings
}

func entryString(e VisibleEntry) string {
	switch {
	case e.ID != "":
		return e.ID
	case e.MIG >= 0:
		return fmt.Sprintf("%d:%d", e.Index, e.MIG)
	}
	return strconv.Itoa(e.Index)
}
