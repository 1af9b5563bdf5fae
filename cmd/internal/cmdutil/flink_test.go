package cmdutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/profile"
)

func TestFlinkFlagsVersion(t *testing.T) {
	dir := t.TempDir()
	legacy := filepath.Join(dir, "legacy")
	modern := filepath.Join(dir, "modern")
	for _, d := range []string{legacy, modern} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(legacy, "flink-conf.yaml"), []byte("taskmanager.numberOfTaskSlots: 1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(modern, "config.yaml"), []byte("taskmanager:\n  numberOfTaskSlots: 1\n"), 0o644))

	cases := []struct {
		name    string
		path    string
		version string
		want    profile.FlinkVersion
		usage   bool
	}{
		{name: "flink-conf.yaml implies 1.x", path: legacy, want: profile.Flink1},
		{name: "config.yaml implies 2.x", path: modern, want: profile.Flink2},
		{name: "flag beats the file", path: legacy, version: "2.x", want: profile.Flink2},
		{name: "release number", path: modern, version: "1.20.0", want: profile.Flink1},
		{name: "unknown version is a usage error", path: modern, version: "3.x", usage: true},
		{name: "garbage is a usage error", path: modern, version: "latest", usage: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			streams, _, _ := TestStreams()
			f := New(streams, Env{})
			fl := &FlinkFlags{Path: tc.path, Version: tc.version}
			fc, err := f.LoadFlink(fl)
			require.NoError(t, err)
			v, err := fl.FlinkVersion(fc)
			if tc.usage {
				require.Error(t, err)
				assert.Equal(t, ExitUsage, ExitCode(err))
				assert.Contains(t, err.Error(), "--flink-version")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, v)
		})
	}
}

func TestAddFlinkFlagsBindsVersion(t *testing.T) {
	var fl FlinkFlags
	cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
	AddFlinkFlags(cmd, &fl)
	cmd.SetArgs([]string{"--flink-version", "1.x", "--flink-conf", "c/"})
	require.NoError(t, cmd.Execute())
	assert.Equal(t, "1.x", fl.Version)
	assert.Equal(t, "c/", fl.Path)
}
