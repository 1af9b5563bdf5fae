// Package version is `yarn-er version`.
package version

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/internal/cmdutil"
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
		Short: "Print yarn-er's version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE:  cmdutil.RunE(opts, runF, versionRun),
	}
}

func versionRun(opts *Options) error {
	bi := Info(opts.F.Build)
	return opts.F.Render(bi, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "yarn-er %s\ncommit:   %s\nbuilt:    %s\ngo:       %s\nplatform: %s\n",
			bi.Version, cmdutil.OrDash(bi.Commit), cmdutil.OrDash(bi.Date), bi.GoVersion, bi.Platform)
		return err
	})
}

// Info describes this binary: the link-time stamp, completed from the Go build information.
func Info(stamp cmdutil.BuildStamp) view.BuildInfo {
	info := view.BuildInfo{Version: stamp.Version, Commit: stamp.Commit, Date: stamp.Date, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
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
