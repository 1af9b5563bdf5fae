package discovery

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var (
	dflRegionRE = regexp.MustCompile(`^region[0-9]+$`)
	dflPortRE   = regexp.MustCompile(`^dfl-port\.([0-9]+)$`)
	opaeDevRE   = regexp.MustCompile(`^intel-fpga-dev\.[0-9]+$`)
	opaePortRE  = regexp.MustCompile(`^intel-fpga-port\.([0-9]+)$`)
)

// crashedID reports whether an AFU or interface id is all f: what the hardware reports when the FPGA
// firmware crashed.
func crashedID(id string) bool {
	return id != "" && strings.Trim(strings.ToLower(id), "f") == ""
}

// pciFromLink finds the last PCI address in a sysfs class link target
// (../../devices/pci0000:00/0000:00:02.0/0000:5e:00.0/fpga_region/region0 → 0000:5e:00.0).
func pciFromLink(root Root, classPath string) string {
	target, err := root.Readlink(classPath)
	if err != nil {
		return ""
	}
	parts := strings.Split(filepath.ToSlash(target), "/")
	for i := len(parts) - 1; i >= 0; i-- {
		if bdf, ok := NormalizePCIBusID(parts[i]); ok && strings.Count(parts[i], ":") == 2 {
			return bdf
		}
	}
	return ""
}

// sortedMatches lists the entries of dir whose names match re, ordered by the number re captures (or by
// name when it captures none).
func sortedMatches(root Root, dir string, re *regexp.Regexp) ([]string, error) {
	entries, err := root.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if re.MatchString(e.Name()) {
			names = append(names, e.Name())
		}
	}
	num := func(s string) int {
		if m := re.FindStringSubmatch(s); len(m) > 1 {
			n, _ := strconv.Atoi(m[1])
			return n
		}
		n, _ := strconv.Atoi(strings.TrimLeft(s, "abcdefghijklmnopqrstuvwxyz-."))
		return n
	}
	sort.Slice(names, func(i, j int) bool {
		if ni, nj := num(names[i]), num(names[j]); ni != nj {
			return ni < nj
		}
		return names[i] < names[j]
	})
	return names, nil
}

// intelDFL reads the upstream Device Feature List driver: every port of every FPGA region is a device.
type intelDFL struct{ root Root }

const dflClassDir = "/sys/class/fpga_region"

func (b intelDFL) Name() string { return "dfl" }

func (b intelDFL) Probe(context.Context) (bool, string) {
	names, err := sortedMatches(b.root, dflClassDir, dflRegionRE)
	if err != nil {
		return probeDirFailure(b.root, dflClassDir, "DFL FPGA driver", err)
	}
	return true, fmt.Sprintf("%s has %d region(s)", b.root.Path(dflClassDir), len(names))
}

func (b intelDFL) Devices(context.Context) ([]Device, error) {
	return intelPorts(b.root, dflClassDir, dflRegionRE, "dfl-fme.*/dfl-fme-region.*/fpga_region/region*/compat_id", dflPortRE, "DFL", b.Name())
}

// intelOPAE reads the out-of-tree OPAE intel-fpga driver: every intel-fpga-port is a device.
type intelOPAE struct{ root Root }

const opaeClassDir = "/sys/class/fpga"

func (b intelOPAE) Name() string { return "opae" }

func (b intelOPAE) Probe(context.Context) (bool, string) {
	names, err := sortedMatches(b.root, opaeClassDir, opaeDevRE)
	if err != nil {
		return probeDirFailure(b.root, opaeClassDir, "OPAE intel-fpga driver", err)
	}
	if len(names) == 0 {
		return false, b.root.Path(opaeClassDir) + " has no intel-fpga-dev entry"
	}
	return true, fmt.Sprintf("%s has %d FPGA(s)", b.root.Path(opaeClassDir), len(names))
}

func (b intelOPAE) Devices(context.Context) ([]Device, error) {
	return intelPorts(b.root, opaeClassDir, opaeDevRE, "intel-fpga-fme.*/pr/interface_id", opaePortRE, "OPAE", b.Name())
}

// intelPorts lists the ports (entries matching portRE) of each FPGA directory (entries of classDir
// matching fpgaRE) as devices, the interface id read from the one file matching ifaceGlob. Ports of
// an FPGA whose firmware crashed are skipped; a missing classDir makes the backend unavailable.
func intelPorts(root Root, classDir string, fpgaRE *regexp.Regexp, ifaceGlob string, portRE *regexp.Regexp, driver, source string) ([]Device, error) {
	fpgas, err := sortedMatches(root, classDir, fpgaRE)
	if err != nil {
		return nil, dirUnavailable(root, classDir, err)
	}
	var devs []Device
	for _, fpga := range fpgas {
		dir := path.Join(classDir, fpga)
		bdf := pciFromLink(root, dir)
		iface := ""
		if m, _ := root.Glob(path.Join(dir, ifaceGlob)); len(m) == 1 {
			iface, _ = root.ReadString(m[0])
		}
		ports, err := sortedMatches(root, dir, portRE)
		if err != nil {
			return nil, err
		}
		for _, port := range ports {
			afu, err := root.ReadString(path.Join(dir, port, "afu_id"))
			if err != nil {
				return nil, err
			}
			if crashedID(afu) || crashedID(iface) {
				continue // the FPGA's firmware crashed; the device is unusable
			}
			fw := "afu " + afu
			if iface != "" {
				fw += ", interface " + iface
			}
			devs = append(devs, Device{
				Vendor: VendorIntelFPGA, Kind: KindFPGA, ID: port, PCIBusID: bdf,
				Model: "Intel FPGA (" + driver + " " + fpga + ")", Firmware: fw, DevNodes: []string{"/dev/" + port}, Source: source,
			})
		}
	}
	return devs, nil
}

// xilinxPCI finds Xilinx (AMD) FPGA cards by PCI vendor 0x10ee. The user physical function (the one
// with a DRM render node, or a user_pf marker from XRT) is the device; management functions are skipped.
type xilinxPCI struct{ root Root }

const pciDevicesDir = "/sys/bus/pci/devices"

func (b xilinxPCI) Name() string { return "xilinx-pci" }

func (b xilinxPCI) functions() ([]string, error) {
	entries, err := b.root.ReadDir(pciDevicesDir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		vendor, err := b.root.ReadString(path.Join(pciDevicesDir, e.Name(), "vendor"))
		if err != nil {
			continue
		}
		if strings.EqualFold(vendor, "0x10ee") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

func (b xilinxPCI) Probe(context.Context) (bool, string) {
	fns, err := b.functions()
	if err != nil {
		if isNotExist(err) {
			return false, b.root.Path(pciDevicesDir) + " does not exist"
		}
		return false, err.Error()
	}
	if len(fns) == 0 {
		return false, "no PCI function of vendor 0x10ee (Xilinx)"
	}
	return true, fmt.Sprintf("%d PCI function(s) of vendor 0x10ee", len(fns))
}

func (b xilinxPCI) Devices(context.Context) ([]Device, error) {
	fns, err := b.functions()
	if err != nil {
		return nil, dirUnavailable(b.root, pciDevicesDir, err)
	}
	var devs []Device
	for _, fn := range fns {
		dir := path.Join(pciDevicesDir, fn)
		minor, hasRender := renderMinor(b.root, fn)
		_, userErr := b.root.Stat(path.Join(dir, "user_pf"))
		if !hasRender && userErr != nil {
			continue // a management function, or no XRT driver bound
		}
		bdf, ok := NormalizePCIBusID(fn)
		if !ok {
			continue
		}
		d := Device{Vendor: VendorXilinx, Kind: KindFPGA, ID: bdf, PCIBusID: bdf, Model: "Xilinx FPGA", Source: b.Name()}
		if shell := xilinxShell(b.root, bdf); shell != "" {
			d.Model, d.Firmware = "Xilinx FPGA ("+shell+")", "shell "+shell
		}
		if hasRender {
			d.Minor = intPtr(minor)
			d.DevNodes = []string{fmt.Sprintf("/dev/dri/renderD%d", minor)}
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// xilinxShell reads the shell name (VBNV) of a card from the function itself or its siblings.
func xilinxShell(root Root, bdf string) string {
	card := bdf[:len(bdf)-1] // the address without the function digit
	for fn := 0; fn < 8; fn++ {
		if m, _ := root.Glob(path.Join(pciDevicesDir, card+strconv.Itoa(fn), "rom.*", "VBNV")); len(m) > 0 {
			if s, err := root.ReadString(m[0]); err == nil && s != "" {
				return s
			}
		}
	}
	return ""
}

// AOCLDevice is one board from `aocl diagnose` (Intel FPGA SDK for OpenCL).
type AOCLDevice struct {
	Alias    string // acl0
	Name     string // the physical device name, /dev/<Name>
	Board    string // the board description
	PCIBusID string // normalised, "" when not reported
	Passed   bool
}

var (
	aoclSection = regexp.MustCompile(`^-{3,}\s*(acl[0-9]+)\s*-{3,}$`)
	aoclName    = regexp.MustCompile(`^(.*?)\s*\(([A-Za-z0-9_.-]+)\)$`)
	aoclBus     = regexp.MustCompile(`(?i)bus:slot\.func\s*=\s*([0-9a-f]{2}):([0-9a-f]{2})\.([0-9a-f]{1,2})`)
)

// ParseAOCLDiagnose parses the per-board sections ("------ acl0 ------" … "DIAGNOSTIC_PASSED") of
// `aocl diagnose`. A section without a "(device name)" line is an error naming its header line.
func ParseAOCLDiagnose(data []byte) ([]AOCLDevice, error) {
	var out []AOCLDevice
	var cur *AOCLDevice
	curLine := 0
	finish := func() error {
		if cur == nil {
			return nil
		}
		if cur.Name == "" {
			return fmt.Errorf("line %d: section %s names no device", curLine, cur.Alias)
		}
		out = append(out, *cur)
		cur = nil
		return nil
	}
	// Blank lines match nothing below, so eachLine skipping them changes nothing.
	err := eachLine(data, func(line int, text string) error {
		if m := aoclSection.FindStringSubmatch(text); m != nil {
			if err := finish(); err != nil {
				return err
			}
			cur, curLine = &AOCLDevice{Alias: m[1]}, line
			return nil
		}
		if cur == nil {
			return nil
		}
		switch {
		case strings.HasPrefix(text, "---"):
			if err := finish(); err != nil {
				return err
			}
		case strings.Contains(text, "DIAGNOSTIC_PASSED"):
			cur.Passed = true
		case cur.Name == "" && aoclName.MatchString(text) && !strings.HasPrefix(text, "Phys Dev Name"):
			m := aoclName.FindStringSubmatch(text)
			cur.Name = m[2]
			board := m[1]
			if i := indexASCIIFold(board, "passed"); i >= 0 {
				board = board[i+len("passed"):]
			}
			cur.Board = strings.TrimSpace(board)
		}
		if m := aoclBus.FindStringSubmatch(text); m != nil && cur != nil {
			fn, _ := strconv.ParseUint(m[3], 16, 8)
			cur.PCIBusID = fmt.Sprintf("0000:%s:%s.%d", strings.ToLower(m[1]), strings.ToLower(m[2]), fn&7)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return out, nil
}

// aocl runs `aocl diagnose`, Hadoop's way of finding Intel OpenCL FPGA boards.
type aocl struct{ runner Runner }

func (b aocl) Name() string { return "aocl" }

func (b aocl) Probe(context.Context) (bool, string) {
	return probeTool(b.runner, "aocl")
}

func (b aocl) Devices(ctx context.Context) ([]Device, error) {
	boards, err := runParsed(ctx, b.runner, ParseAOCLDiagnose, "aocl diagnose", "aocl", "diagnose")
	if err != nil {
		return nil, err
	}
	var devs []Device
	for _, bd := range boards {
		if !bd.Passed {
			continue
		}
		model := "Intel FPGA (OpenCL " + bd.Alias + ")"
		if bd.Board != "" {
			model = "Intel FPGA (" + bd.Board + ")"
		}
		devs = append(devs, Device{
			Vendor: VendorIntelFPGA, Kind: KindFPGA, ID: bd.Name, PCIBusID: bd.PCIBusID, Model: model,
			DevNodes: []string{"/dev/" + bd.Name}, Source: b.Name(),
		})
	}
	return devs, nil
}

// indexASCIIFold is strings.Index with ASCII letters compared case-insensitively. Unlike an
// index into strings.ToLower(s), the result is always an index into s: ToLower may change the
// length of text that is not valid UTF-8.
func indexASCIIFold(s, lowerSub string) int {
	lower := func(c byte) byte {
		if 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
outer:
	for i := 0; i+len(lowerSub) <= len(s); i++ {
		for j := 0; j < len(lowerSub); j++ {
			if lower(s[i+j]) != lowerSub[j] {
				continue outer
			}
		}
		return i
	}
	return -1
}
