package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/amrm/amrmfake"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
)

// BenchmarkAMProcess runs the static yarn-er binary (CGO_ENABLED=0, as submit stages it) as
// `yarn-er am` in a process of its own against a fake ResourceManager and NodeManagers
// (amrmfake: the real Hadoop IPC, SASL and protobuf; containers exit 0 at once) and reports
// the peak RSS and its anonymous and file-backed parts at exit, as the AM logs them. It is the
// quick, cluster-free measure of the AM's memory; bench/distshell.sh measures it on the
// mini-YARN.
//
//	go test ./cmd/yarn-er/ -run '^$' -bench BenchmarkAMProcess -benchtime 5x
func BenchmarkAMProcess(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "yarn-er")
	require.NoError(b, goBuild(bin, "CGO_ENABLED=0"))
	for _, n := range []int{4, 64} {
		b.Run(fmt.Sprintf("containers=%d", n), func(b *testing.B) {
			var peak, anon, file, released float64
			for i := 0; i < b.N; i++ {
				f := runAMProcess(b, bin, n)
				peak += f["peakRSSKiB"]
				anon += f["rssAnonKiB"]
				file += f["rssFileKiB"]
				released += f["startupPagesReleasedKiB"]
			}
			b.ReportMetric(peak/float64(b.N), "KiB-peak-RSS")
			b.ReportMetric(anon/float64(b.N), "KiB-anon-at-exit")
			b.ReportMetric(file/float64(b.N), "KiB-file-at-exit")
			b.ReportMetric(released/float64(b.N), "KiB-released-at-start")
		})
	}
}

// runAMProcess runs one `yarn-er am` for n ranks on a fresh fake cluster and returns the
// numeric fields of its "yarn-er am: done" line.
func runAMProcess(b *testing.B, bin string, n int) map[string]float64 {
	b.Helper()
	c := amrmfake.New(b, amrmfake.Options{SlotsPerNode: 64})
	dir := b.TempDir()
	staging := filepath.Join(dir, ".yarn-er", amrmfake.AppID)
	require.NoError(b, os.MkdirAll(staging, 0o700))
	spec := &jobspec.Spec{
		Version: jobspec.Version, Name: "rss", User: "alice",
		SchedulerAddresses: []string{c.SchedulerAddr},
		Containers:         n,
		Priority:           1,
		Resource: []jobspec.Quantity{
			{Name: records.MemoryMB, Value: 128, Units: "Mi"},
			{Name: records.VCores, Value: 1},
			{Name: records.GPU, Value: 1},
		},
		Devices: &jobspec.Devices{Kind: "gpu", Amount: 1},
		Command: []string{"true"},
		Binary: jobspec.LocalFile{Name: jobspec.BinaryName, URL: "file://" + staging + "/yarn-er",
			Size: 6, MtimeMillis: 1700000001000, Type: records.LocalFile},
		StagingDir:      "file://" + staging,
		HeartbeatMillis: 20,
	}
	sb, err := json.Marshal(spec)
	require.NoError(b, err)
	specPath := filepath.Join(dir, jobspec.FileName)
	require.NoError(b, os.WriteFile(specPath, sb, 0o600))
	tb, err := c.Credentials().Marshal(records.FormatWritable)
	require.NoError(b, err)
	tokens := filepath.Join(dir, "container_tokens")
	require.NoError(b, os.WriteFile(tokens, tb, 0o600))

	cmd := exec.Command(bin, "am")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"CONTAINER_ID=container_" + strings.TrimPrefix(amrmfake.AppID, "application_") + "_01_000001",
		records.EnvTokenFile + "=" + tokens, "MAX_APP_ATTEMPTS=1", "NM_HOST=127.0.0.1"}
	if g := os.Getenv("GODEBUG"); g != "" {
		cmd.Env = append(cmd.Env, "GODEBUG="+g)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(b, cmd.Run(), stderr.String())
	fields := map[string]float64{}
	text := stderr.String()
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		if !strings.Contains(sc.Text(), "yarn-er am: done") {
			continue
		}
		for _, kv := range strings.Fields(sc.Text()) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				fields[k] = x
			}
		}
	}
	require.Contains(b, fields, "peakRSSKiB", text)
	return fields
}
