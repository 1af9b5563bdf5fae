package preflight

import (
	"archive/zip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeJar writes a jar (a zip) with the given entries; service is the content of the driver
// factory ServiceLoader file ("" leaves it out).
func writeJar(t testing.TB, path string, withClass bool, service string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	if withClass {
		w, err := zw.Create(gpuFactoryEntry)
		require.NoError(t, err)
		_, err = w.Write([]byte("\xca\xfe\xba\xbe"))
		require.NoError(t, err)
	}
	if service != "" {
		w, err := zw.Create(driverFactoryService)
		require.NoError(t, err)
		_, err = w.Write([]byte(service))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
}

const gpuService = "# Licensed to the ASF\n" + GPUDriverFactory + "\n"

func TestGPUPluginJar(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(t *testing.T, home string)
		status Status
		parts  []string
		fix    string
	}{
		{name: "in plugins/external-resource-gpu", status: StatusPass, parts: []string{"installed as a plugin", "flink-external-resource-gpu-1.20.0.jar"},
			setup: func(t *testing.T, home string) {
				writeJar(t, filepath.Join(home, gpuPluginDir, "flink-external-resource-gpu-1.20.0.jar"), true, gpuService)
			}},
		{name: "renamed, in another plugin directory", status: StatusPass, parts: []string{"gpu-driver.jar"},
			setup: func(t *testing.T, home string) {
				writeJar(t, filepath.Join(home, "plugins", "gpu", "gpu-driver.jar"), true, gpuService)
			}},
		{name: "only the scripts", status: StatusFail, parts: []string{"no jar in a subdirectory", "Could not find factory class"}, fix: "flink-external-resource-gpu-<flink version>.jar",
			setup: func(t *testing.T, home string) {}},
		{name: "in lib/", status: StatusFail, parts: []string{"is not in a subdirectory of"}, fix: "Flink loads driver factories only from subdirectories of plugins/",
			setup: func(t *testing.T, home string) {
				writeJar(t, filepath.Join(home, "lib", "flink-external-resource-gpu-1.20.0.jar"), true, gpuService)
			}},
		{name: "directly in plugins/", status: StatusFail, parts: []string{"is not in a subdirectory of"},
			setup: func(t *testing.T, home string) {
				writeJar(t, filepath.Join(home, "plugins", "flink-external-resource-gpu-1.20.0.jar"), true, gpuService)
			}},
		{name: "jar without the ServiceLoader entry", status: StatusFail, parts: []string{"no jar in a subdirectory"},
			setup: func(t *testing.T, home string) {
				writeJar(t, filepath.Join(home, gpuPluginDir, "flink-external-resource-gpu-1.20.0.jar"), true, "")
			}},
		{name: "truncated jar", status: StatusFail, parts: []string{"not a valid zip file"},
			setup: func(t *testing.T, home string) {
				require.NoError(t, os.WriteFile(filepath.Join(home, gpuPluginDir, "flink-external-resource-gpu-1.20.0.jar"), []byte("PK"), 0o644))
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := flinkHome(t, 0o755, false)
			require.NoError(t, os.Remove(filepath.Join(home, gpuPluginDir, "flink-external-resource-gpu-1.20.0.jar")))
			tc.setup(t, home)
			rep := run(t, Input{Flink: flinkConf(t, goodFlink), FlinkHome: home})
			e := requireOne(t, rep, IDGPUPluginJar, tc.status, tc.parts...)
			assert.Contains(t, e.Fix, tc.fix)
			if tc.status == StatusFail {
				assert.Contains(t, e.Source, "flink-conf.yaml:")
				assert.Contains(t, e.Message, "gpu")
			}
		})
	}

	// Skips: no GPU driver, or no FLINK_HOME.
	text := withoutLines(goodFlink, "external-resource.gpu.driver-factory.class") + "external-resource.gpu.driver-factory.class: com.example.MyGPUFactory\n"
	rep := run(t, Input{Flink: flinkConf(t, text), FlinkHome: t.TempDir()})
	requireOne(t, rep, IDGPUPluginJar, StatusSkip, "no resource uses Flink's GPU driver")
	rep = run(t, Input{Flink: flinkConf(t, goodFlink)})
	requireOne(t, rep, IDGPUPluginJar, StatusSkip, "FLINK_HOME")
}

// Flink's own jar, when the local Maven repository has it (the integration tests and the demo
// fetch it).
func TestGPUPluginJarRealFlinkJar(t *testing.T) {
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	jar := filepath.Join(home, ".m2", "repository", "org", "apache", "flink", "flink-external-resource-gpu", "1.20.0", "flink-external-resource-gpu-1.20.0.jar")
	if _, err := os.Stat(jar); err != nil {
		t.Skip("Flink's GPU plugin jar is not in the local Maven repository")
	}
	ok, err := holdsGPUFactory(jar)
	require.NoError(t, err)
	assert.True(t, ok)
}
