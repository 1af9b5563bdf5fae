// Package amruntest runs an ApplicationMaster binary in a process of its own against the fake
// cluster of amrmfake, for the tests and benchmarks of the binaries that carry `am`.
package amruntest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/amrm/amrmfake"
	"github.com/yarn-er/yarn-er/cmd/internal/amrun"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
)

// RunProcess runs bin (yarn-er or yarn-er-am) as `BIN am` in a process of its own for n ranks,
// against a fresh fake ResourceManager and NodeManagers (amrmfake: the real Hadoop IPC, SASL and
// protobuf; every container exits 0 at once), checks that it exits 0, and returns the numeric
// fields of its "yarn-er am: done" line (peakRSSKiB, rssAnonKiB, rssFileKiB, heartbeats, ...).
func RunProcess(b testing.TB, bin string, n int) map[string]float64 {
	b.Helper()
	c := amrmfake.New(b, amrmfake.Options{SlotsPerNode: 64})
	dir := b.TempDir()
	staging := filepath.Join(dir, ".yarn-er", amrmfake.AppID)
	require.NoError(b, os.MkdirAll(staging, 0o700))
	spec := c.Spec(n, staging)
	spec.Name = "rss"
	spec.Resource[0].Value = 128 // memory-mb
	spec.Binary.URL = "file://" + staging + "/yarn-er"
	spec.HeartbeatMillis = 20
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
	for _, k := range []string{"GODEBUG", "GOGC", "GOMAXPROCS"} { // for experiments
		if v := os.Getenv(k); v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
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

// Report runs RunProcess b.N times and reports the means of the peak RSS, the anonymous and
// file-backed parts at exit and the pages released at the start, in KiB.
func Report(b *testing.B, bin string, n int) {
	var peak, anon, file, released float64
	for i := 0; i < b.N; i++ {
		f := RunProcess(b, bin, n)
		peak += f["peakRSSKiB"]
		anon += f["rssAnonKiB"]
		file += f["rssFileKiB"]
		released += f["startupPagesReleasedKiB"]
	}
	b.ReportMetric(peak/float64(b.N), "KiB-peak-RSS")
	b.ReportMetric(anon/float64(b.N), "KiB-anon-at-exit")
	b.ReportMetric(file/float64(b.N), "KiB-file-at-exit")
	b.ReportMetric(released/float64(b.N), "KiB-released-at-start")
}

// BadInput is a start of the AM with bad input: it must end at once, exit Code and say Want on
// stderr (YARN's diagnostics of the attempt).
type BadInput struct {
	Name string
	Env  map[string]string
	Code int
	Want string
}

// BadInputs writes the job specs of the bad-input cases into a temporary directory and returns
// the cases: a corrupt and a missing spec, a valid spec outside a container, without a token file
// and with a token file that does not exist.
func BadInputs(t testing.TB) []BadInput {
	t.Helper()
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	require.NoError(t, os.WriteFile(corrupt, []byte(`{"version":1,"containers":`), 0o600))
	valid := filepath.Join(dir, "valid.json")
	require.NoError(t, os.WriteFile(valid, []byte(`{"version":1,"name":"x","user":"u","schedulerAddresses":["rm:8030"],
		"containers":1,"restarts":0,"priority":1,"resource":[{"name":"memory-mb","value":128,"units":"Mi"},{"name":"vcores","value":1}],
		"command":["true"],"binary":{"name":"yarn-er","url":"hdfs://nn:8020/s/yarn-er","size":1,"mtimeMillis":1,"type":"FILE"},
		"stagingDir":"hdfs://nn:8020/s"}`), 0o600))
	const container = "container_1700000000000_0001_01_000001"
	return []BadInput{
		{"corrupt spec", map[string]string{jobspec.EnvSpecFile: corrupt}, amrun.ExitSpec, "corrupt.json: job spec: not JSON"},
		{"missing spec", map[string]string{jobspec.EnvSpecFile: filepath.Join(dir, "absent.json")}, amrun.ExitSpec, "absent.json"},
		{"not in a container", map[string]string{jobspec.EnvSpecFile: valid}, amrun.ExitFailed, "CONTAINER_ID is not set"},
		{"no token file", map[string]string{jobspec.EnvSpecFile: valid, "CONTAINER_ID": container}, amrun.ExitAuth, "HADOOP_TOKEN_FILE_LOCATION is not set"},
		{"missing token file", map[string]string{jobspec.EnvSpecFile: valid, "CONTAINER_ID": container,
			records.EnvTokenFile: filepath.Join(dir, "absent")}, amrun.ExitAuth, "absent"},
	}
}
