package preflight

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
)

// withProfiles loads goodHadoop with resource profiles on and profiles (a JSON document, "" for
// no file) beside it.
func withProfiles(t *testing.T, profiles string) *conf.HadoopConfig {
	t.Helper()
	dir := goodHadoop().with("yarn-site.xml", "yarn.resourcemanager.resource-profiles.enabled", "true").write(t)
	if profiles != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "resource-profiles.json"), []byte(profiles), 0o644))
	}
	hc, err := conf.LoadHadoop(conf.HadoopOptions{Dir: dir, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	return hc
}

func TestResourceProfiles(t *testing.T) {
	for _, tc := range []struct {
		name           string
		hc             func(t *testing.T) *conf.HadoopConfig
		files, maxes   Status
		fileMsg        []string
		maxMsg, maxFix string
	}{
		{name: "disabled", hc: func(t *testing.T) *conf.HadoopConfig { return goodHadoop().load(t) }, files: StatusSkip, maxes: StatusSkip,
			fileMsg: []string{"resource-profiles.enabled is not true"}},
		{name: "valid", hc: func(t *testing.T) *conf.HadoopConfig {
			return withProfiles(t, `{"default": {"memory-mb": 1024, "vcores": 1}, "gpu": {"memory-mb": 4096, "vcores": 2, "yarn.io/gpu": 1}}`)
		}, files: StatusPass, maxes: StatusPass, fileMsg: []string{"2 profiles: default, gpu"}},
		{name: "above the maximum", hc: func(t *testing.T) *conf.HadoopConfig {
			return withProfiles(t, `{"default": {"memory-mb": 1024, "vcores": 1}, "huge": {"memory-mb": 65536, "vcores": 2, "yarn.io/gpu": 8}}`)
		}, files: StatusPass, maxes: StatusWarn, fileMsg: []string{"2 profiles"},
			maxMsg: "profile huge asks for 65536Mi of memory-mb, above the maximum allocation yarn.scheduler.maximum-allocation-mb", maxFix: "make profile huge ask for at most 16384Mi of memory-mb"},
		{name: "no file", hc: func(t *testing.T) *conf.HadoopConfig { return withProfiles(t, "") }, files: StatusFail, maxes: StatusSkip,
			fileMsg: []string{"resource-profiles.json", "does not start"}},
		{name: "undeclared type", hc: func(t *testing.T) *conf.HadoopConfig {
			return withProfiles(t, `{"default": {"memory-mb": 1024, "vcores": 1, "nvidia.com/gpu": 1}}`)
		}, files: StatusFail, maxes: StatusSkip, fileMsg: []string{"profile default: nvidia.com/gpu: resource type \"nvidia.com/gpu\" is not declared"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := run(t, Input{Flink: flinkConf(t, goodFlink), Hadoop: tc.hc(t)})
			requireOne(t, rep, IDResourceProfiles, tc.files, tc.fileMsg...)
			if tc.maxMsg != "" {
				requireOneFix(t, rep, IDProfileMaxAllocation, tc.maxes, tc.maxFix, tc.maxMsg)
			} else {
				requireOne(t, rep, IDProfileMaxAllocation, tc.maxes)
			}
		})
	}
}
