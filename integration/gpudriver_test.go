//go:build integration

package integration

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/discovery/discoverytest"
)

// gpuDriverBudget bounds one probe JVM (start, discovery, answer) on a loaded machine.
const gpuDriverBudget = 2 * time.Minute

// gpuDriverSetup is a Flink 1.20.0 home from docker/flink (yarn-er linked as
// plugins/external-resource-gpu/nvidia-gpu-discovery.sh), the probe compiled against its jars, and
// a fake host of NVIDIA GPUs.
type gpuDriverSetup struct {
	script   string // the link to yarn-er Flink's GPU driver runs
	cp       string // classpath: Flink's lib/, the GPU plugin jar, the probe
	hostRoot string
	coord    string
}

func newGPUDriverSetup(t *testing.T, gpus int) *gpuDriverSetup {
	t.Helper()
	root, err := RepoRoot()
	require.NoError(t, err)
	dir := t.TempDir()
	bin := buildBinary(t, "./cmd/yarn-er", false)
	home := filepath.Join(dir, "flink")
	ctx, cancel := context.WithTimeout(context.Background(), flinkBuildBudget)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "docker", "flink", "build"), "home", home, "--yarn-er", bin)
	cmd.Env = append(os.Environ(), "FLINK_VERSION=1.20.0")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "docker/flink/build home: %s", b)

	plugin := filepath.Join(home, "plugins", "external-resource-gpu")
	jar := filepath.Join(plugin, "flink-external-resource-gpu-1.20.0.jar")
	require.FileExists(t, jar)
	classes := filepath.Join(dir, "probe")
	cp := filepath.Join(home, "lib", "*") + ":" + jar
	javac := exec.Command("javac", "-d", classes, "-cp", cp, filepath.Join(root, "integration", "testdata", "gpudriver", "GPUDriverProbe.java"))
	b, err = javac.CombinedOutput()
	require.NoError(t, err, "javac GPUDriverProbe: %s", b)

	tree := discoverytest.New(t)
	tree.NVIDIAHost(gpus)
	coord := filepath.Join(dir, "coord", "gpus")
	require.NoError(t, os.MkdirAll(filepath.Dir(coord), 0o755))
	return &gpuDriverSetup{
		script:   filepath.Join(plugin, "nvidia-gpu-discovery.sh"),
		cp:       cp + ":" + classes,
		hostRoot: tree.Root,
		coord:    coord,
	}
}

// probe is one JVM running Flink's GPU driver; it holds what it got until release.
type probe struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	line  string // "GPUS: 0,1" or "ERROR: ..."
}

// start runs a probe JVM asking Flink's GPU driver for amount GPUs with the given
// discovery-script.args ("" leaves them unset) and waits for its answer.
func (s *gpuDriverSetup) start(t *testing.T, amount string, args string) *probe {
	t.Helper()
	argv := []string{"-cp", s.cp, "GPUDriverProbe", amount, "discovery-script.path=" + s.script}
	if args != "" {
		argv = append(argv, "discovery-script.args="+args)
	}
	cmd := exec.Command("java", argv...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	p := &probe{cmd: cmd, stdin: stdin}
	t.Cleanup(func() { p.release() })

	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "GPUS: ") || strings.HasPrefix(l, "ERROR: ") {
				lines <- l
				break
			}
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l, ok := <-lines:
		require.True(t, ok, "the probe ended without an answer; stderr: %s", stderr.String())
		p.line = l
	case <-time.After(gpuDriverBudget):
		t.Fatalf("no answer from the probe within %s; stderr: %s", gpuDriverBudget, stderr.String())
	}
	return p
}

// release closes the probe's stdin, so it ends, and waits for it.
func (p *probe) release() {
	if p.stdin != nil {
		_ = p.stdin.Close()
		p.stdin = nil
		_ = p.cmd.Wait()
	}
}

// gpus returns the indices the probe got.
func (p *probe) gpus(t *testing.T) []string {
	t.Helper()
	require.True(t, strings.HasPrefix(p.line, "GPUS: "), p.line)
	return strings.Split(strings.TrimPrefix(p.line, "GPUS: "), ",")
}

// TestFlinkGPUDriverContract: Flink's own GPUDriverFactory (flink-external-resource-gpu 1.20.0)
// runs yarn-er as its discovery script: the amount it asks for, its literal "null" when the
// arguments are unset, coordination off and on (two JVMs at once get disjoint GPUs; a third is
// refused while they hold them, and gets them once one ends), and a failure when too few exist.
func TestFlinkGPUDriverContract(t *testing.T) {
	s := newGPUDriverSetup(t, 4)
	host := "--host-root " + s.hostRoot + " --vendor nvidia"
	coord := "--enable-coordination-mode --coordination-file " + s.coord + " " + host

	t.Run("amounts without coordination", func(t *testing.T) {
		for amount, want := range map[string][]string{"1": {"0"}, "2": {"0", "1"}, "4": {"0", "1", "2", "3"}} {
			p := s.start(t, amount, host)
			assert.Equal(t, want, p.gpus(t), "amount %s", amount)
			p.release()
		}
	})

	t.Run("too few GPUs", func(t *testing.T) {
		p := s.start(t, "5", host)
		assert.Contains(t, p.line, "ERROR: ")
		assert.Contains(t, p.line, "return code: 5", "exit 5: not enough devices")
	})

	t.Run("arguments unset", func(t *testing.T) {
		// GPUDriver then runs "<script> <amount> null"; yarn-er accepts the trailing null (no
		// usage error, exit 2) and discovers on this host, which may have no GPU (exit 5).
		p := s.start(t, "1", "")
		assert.NotContains(t, p.line, "return code: 2", p.line)
		if strings.HasPrefix(p.line, "ERROR: ") {
			assert.Contains(t, p.line, "return code: 5", p.line)
		}
	})

	t.Run("coordination", func(t *testing.T) {
		a := s.start(t, "2", coord)
		b := s.start(t, "2", coord)
		ga, gb := a.gpus(t), b.gpus(t)
		assert.Len(t, ga, 2)
		assert.Len(t, gb, 2)
		assert.ElementsMatch(t, []string{"0", "1", "2", "3"}, append(append([]string{}, ga...), gb...), "disjoint GPUs")

		// All four are held: a third JVM is refused.
		c := s.start(t, "1", coord)
		assert.Contains(t, c.line, "return code: 5", c.line)

		// Once a JVM ends its GPUs are free again.
		a.release()
		d := s.start(t, "2", coord)
		assert.ElementsMatch(t, ga, d.gpus(t), "the GPUs of the ended JVM")
	})
}
