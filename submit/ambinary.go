package submit

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// AMBinaryName is the name yarn-er's small ApplicationMaster binary (cmd/yarn-er-am) has beside
// the yarn-er binary, and the name it is localized under in the AM container.
const AMBinaryName = "yarn-er-am"

// amBinary returns the small ApplicationMaster binary to stage for the yarn-er binary bin, or
// "" when the AM container runs bin itself (`yarn-er am`). explicit (--am-binary) must be built
// from the same source as bin for the same OS and architecture; without it, the AM binary beside
// bin (symbolic links resolved; see besideName) is used when it is, and skipped with a reason
// otherwise.
func amBinary(bin, explicit string) (path, skipped string, err error) {
	if explicit != "" {
		if err := sameBuild(bin, explicit); err != nil {
			return "", "", badRequest("--am-binary", "%s: %v: give the %s built with %s", explicit, err, AMBinaryName, bin)
		}
		return explicit, "", nil
	}
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		real = bin
	}
	beside := filepath.Join(filepath.Dir(real), besideName(filepath.Base(real)))
	if _, err := os.Stat(beside); err != nil {
		return "", fmt.Sprintf("no %s beside %s", AMBinaryName, real), nil
	}
	if err := sameBuild(bin, beside); err != nil {
		return "", fmt.Sprintf("%s: %v", beside, err), nil
	}
	return beside, "", nil
}

// besideName is the name of the AM binary that goes with the yarn-er binary named bin: yarn-er-am
// beside yarn-er, and for the release files yarn-er-am-linux-ARCH beside yarn-er-linux-ARCH and
// yarn-er-linux-ARCH-nvml (the AM needs no NVML).
func besideName(bin string) string {
	rest, ok := strings.CutPrefix(bin, "yarn-er")
	if !ok {
		return AMBinaryName
	}
	return AMBinaryName + strings.TrimSuffix(rest, "-nvml")
}

// sameBuild checks that the AM binary am is a regular file built from the same module version
// and source revision as the yarn-er binary bin, for the same OS and architecture (the Go build
// information both carry; it can be read for any architecture).
func sameBuild(bin, am string) error {
	if fi, err := os.Stat(am); err != nil {
		return err
	} else if !fi.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	ai, err := buildinfo.ReadFile(am)
	if err != nil {
		return fmt.Errorf("not a Go binary with build information: %w", err)
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("the yarn-er binary %s has no build information: %w", bin, err)
	}
	return compareBuilds(ai, bi)
}

// compareBuilds checks the build information of an AM binary (ai) against the yarn-er binary's
// (bi).
func compareBuilds(ai, bi *debug.BuildInfo) error {
	if !strings.HasSuffix(ai.Path, "/cmd/"+AMBinaryName) {
		return fmt.Errorf("it is %s, not yarn-er's %s", orUnknown(ai.Path), AMBinaryName)
	}
	for _, k := range []string{"GOOS", "GOARCH", "vcs.revision", "vcs.time", "vcs.modified"} {
		if a, b := setting(ai, k), setting(bi, k); a != b {
			return fmt.Errorf("built with %s=%s, the yarn-er binary with %s=%s", k, orUnknown(a), k, orUnknown(b))
		}
	}
	if ai.Main.Version != bi.Main.Version {
		return fmt.Errorf("module version %s, the yarn-er binary's %s", ai.Main.Version, bi.Main.Version)
	}
	return nil
}

func setting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
