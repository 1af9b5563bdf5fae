package preflight

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// containerExecutorCfg is the file the setuid container-executor of LinuxContainerExecutor reads;
// Hadoop's distribution keeps it in the configuration directory.
const containerExecutorCfg = "container-executor.cfg"

// maxExecutorCfgBytes bounds how much of container-executor.cfg is read.
const maxExecutorCfgBytes = 1 << 20

// executorValue is one key=value line of container-executor.cfg.
type executorValue struct {
	value string
	line  int
}

// parseExecutorCfg parses container-executor.cfg as its INI-like format is written: "[section]"
// headers, "key=value" lines (blanks around both trimmed), '#' starting a comment line; keys
// before any header belong to section "". A later key replaces an earlier one in its section.
// Lines of another shape are ignored.
func parseExecutorCfg(data []byte) map[string]map[string]executorValue {
	out := map[string]map[string]executorValue{"": {}}
	section := ""
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(raw)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.TrimSpace(line[1 : len(line)-1])
			if out[section] == nil {
				out[section] = map[string]executorValue{}
			}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		out[section][strings.TrimSpace(k)] = executorValue{value: strings.TrimSpace(v), line: i + 1}
	}
	return out
}

// readExecutorCfg reads container-executor.cfg from dir; found is false when it is not there.
func readExecutorCfg(dir string) (cfg map[string]map[string]executorValue, path string, found bool, err error) {
	path = filepath.Join(dir, containerExecutorCfg)
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, path, false, nil
		}
		return nil, path, true, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxExecutorCfgBytes))
	if err != nil {
		return nil, path, true, err
	}
	return parseExecutorCfg(data), path, true, nil
}

// executorModuleCheck reports, for the GPU or FPGA plugin t isolated by LinuxContainerExecutor,
// whether container-executor.cfg (when this configuration has it) enables the device's module:
// without "[gpu] module.enabled=true" (or [fpga]) the container-executor refuses the
// NodeManager's device isolation calls and containers that get a device fail to launch.
func (f *facts) executorModuleCheck(out *results, t string) (note string, ok bool) {
	section := "gpu"
	if strings.Contains(t, "fpga") {
		section = "fpga"
	}
	dir := f.in.Hadoop.Dir()
	if dir == "" {
		return "", true
	}
	cfg, path, found, err := readExecutorCfg(dir)
	switch {
	case !found:
		return fmt.Sprintf(" (no %s in %s: its [%s] module is not checked)", containerExecutorCfg, dir, section), true
	case err != nil:
		return fmt.Sprintf(" (cannot read %s: %v; its [%s] module is not checked)", path, err, section), true
	}
	v, has := cfg[section]["module.enabled"]
	if has && v.value == "true" {
		return fmt.Sprintf(", %s:%d enables the %s module", path, v.line, section), true
	}
	src, got := path, "is not set"
	if has {
		src, got = fmt.Sprintf("%s:%d", path, v.line), fmt.Sprintf("is %q", v.value)
	}
	out.warn(src,
		fmt.Sprintf("add \"[%s]\" with \"module.enabled=true\" to %s on every NodeManager", section, containerExecutorCfg),
		"%s: [%s] module.enabled %s in %s: the container-executor refuses the NodeManager's %s isolation, so containers that get a %s fail to launch",
		t, section, got, path, section, section)
	return "", false
}
