package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Build information, set with -ldflags "-X main.version=... -X main.commit=... -X main.date=...".
var (
	version = ""
	commit  = ""
	date    = ""
)

// buildInfo describes this binary. Its JSON shape is public.
type buildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

func currentBuildInfo() buildInfo {
	info := buildInfo{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version(),
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

func versionString() string {
	bi := currentBuildInfo()
	s := bi.Version
	if bi.Commit != "" {
		s += " (" + shortCommit(bi.Commit) + ")"
	}
	return s
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print yarn-er's version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi := currentBuildInfo()
			return a.render(bi, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "yarn-er %s\ncommit:   %s\nbuilt:    %s\ngo:       %s\nplatform: %s\n",
					bi.Version, orDash(bi.Commit), orDash(bi.Date), bi.GoVersion, bi.Platform)
				return err
			})
		},
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
