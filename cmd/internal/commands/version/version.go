// Package version is `yarn-er version`.
package version

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/discovery"
	"github.com/yarn-er/yarn-er/view"
)

// Options are version's inputs.
type Options struct {
	cmdutil.Base
}

// NewCmdVersion returns `yarn-er version`; runF (nil: versionRun) runs it.
func NewCmdVersion(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Base: cmdutil.Base{F: f}}
	return &cobra.Command{
		Use:   "version",
		Short: "Print yarn-er's version, commit, Go version and discovery backends",
		Args:  cobra.NoArgs,
		RunE:  cmdutil.RunE(opts, runF, versionRun),
	}
}

func versionRun(opts *Options) error {
	bi := Info(opts.F.Build)
	return opts.F.Render(bi, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "yarn-er %s\ncommit:    %s\nbuilt:     %s\ngo:        %s\nplatform:  %s\ndiscovery: %s\n",
			bi.Version, cmdutil.OrDash(bi.Commit), cmdutil.OrDash(bi.Date), bi.GoVersion, bi.Platform,
			DiscoveryLine(bi.Discovery))
		return err
	})
}

// Backends lists every discovery backend and how this build has it: NVML needs cgo on Linux, the
// others are pure Go and always there.
func Backends() []view.DiscoveryBackend {
	names := discovery.BackendNames()
	out := make([]view.DiscoveryBackend, 0, len(names))
	for _, n := range names {
		b := view.DiscoveryBackend{Name: n, Available: true, Build: "go"}
		if n == "nvml" {
			b.Available, b.Build = nvmlBuild()
		}
		out = append(out, b)
	}
	return out
}

// DiscoveryLine is the backends in one line, the backends built the same way together:
// "nvml: cgo; procfs, nvidia-smi, ...: pure Go".
func DiscoveryLine(backends []view.DiscoveryBackend) string {
	var groups []string
	names := map[string][]string{}
	for _, b := range backends {
		if _, ok := names[b.Build]; !ok {
			groups = append(groups, b.Build)
		}
		names[b.Build] = append(names[b.Build], b.Name)
	}
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		label := g
		if g == "go" {
			label = "pure Go"
		}
		parts = append(parts, strings.Join(names[g], ", ")+": "+label)
	}
	return strings.Join(parts, "; ")
}

// Info describes this binary: the link-time stamp, completed from the Go build information.
func Info(stamp cmdutil.BuildStamp) view.BuildInfo {
	info := view.BuildInfo{Version: stamp.Version, Commit: stamp.Commit, Date: stamp.Date, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH, Discovery: Backends()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && info.Commit == "":
				info.Commit = s.Value
			case s.Key == "vcs.time" && info.Date == "":
				info.Date = s.Value
			}
		}
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	return info
}

// String is the one-line version of --version: "v1.2.3 (abcdef012345)".
func String(stamp cmdutil.BuildStamp) string {
	bi := Info(stamp)
	s := bi.Version
	if bi.Commit != "" {
		c := bi.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		s += " (" + c + ")"
	}
	return s
}
