package doctor

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil/cmdtest"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/view"
	"github.com/yarn-er/yarn-er/yarn"
)

func TestDoctorFlags(t *testing.T) {
	got := cmdtest.Capture(t, NewCmdDoctor, "--nodes", "gpu-1:8041,gpu-2", "--gpus", "2", "--timeout", "90s",
		"--memory", "256m", "--queue", "gpu", "--yarn-er-binary", "/opt/yarn-er", "--progress", "plain", "--rm", "http://rm:8088")
	assert.Equal(t, []string{"gpu-1:8041", "gpu-2"}, got.Nodes)
	assert.Equal(t, int64(2), got.GPUs)
	assert.Equal(t, 90*time.Second, got.Timeout)
	assert.Equal(t, "256m", got.Memory)
	assert.Equal(t, "gpu", got.Queue)
	assert.Equal(t, "/opt/yarn-er", got.Binary)
	assert.Equal(t, "plain", got.Progress)
	assert.Equal(t, []string{"http://rm:8088"}, got.Conn.RM.Addrs)

	def := cmdtest.Capture(t, NewCmdDoctor)
	assert.Equal(t, int64(1), def.GPUs)
	assert.Equal(t, DefaultTimeout, def.Timeout)
	assert.Equal(t, DefaultMemory, def.Memory)
	assert.Empty(t, def.Nodes)
}

func TestDoctorRefusesBadFlagsBeforeAskingTheRM(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Options)
		msg  string
	}{
		{name: "no GPU", mod: func(o *Options) { o.GPUs = 0 }, msg: "--gpus 0"},
		{name: "no time", mod: func(o *Options) { o.Timeout = 0 }, msg: "--timeout 0s"},
		{name: "progress", mod: func(o *Options) { o.Progress = "loud" }, msg: `--progress "loud"`},
		{name: "empty node", mod: func(o *Options) { o.Nodes = []string{"a", " "} }, msg: "--nodes: an empty name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &Options{Base: cmdutil.Base{F: cmdtest.Factory()}, GPUs: 1, Timeout: time.Minute, Progress: "auto"}
			tc.mod(o)
			err := doctorRun(o)
			var usage *cmdutil.UsageError
			require.ErrorAs(t, err, &usage)
			assert.ErrorContains(t, err, tc.msg)
			assert.Equal(t, cmdutil.ExitUsage, cmdutil.ExitCode(err))
		})
	}
}

func TestProbeFlags(t *testing.T) {
	got := cmdtest.Capture(t, NewCmdProbe, "--granted", "2", "--host-root", "/hostfs", "--http-timeout", "3s")
	assert.Equal(t, int64(2), got.Granted)
	assert.Equal(t, "/hostfs", got.HostRoot)
	assert.Equal(t, 3*time.Second, got.HTTPTimeout)
	assert.True(t, NewCmdProbe(cmdtest.Factory(), nil).Hidden, "the probe is for doctor's containers only")
}

func node(id, host, state string, gpus int64) yarn.Node {
	n := yarn.Node{ID: id, Host: host, State: state}
	n.Total.Set(records.MemoryMB, records.Quantity{Value: 16384, Units: "Mi"})
	if gpus > 0 {
		n.Total.Set(records.GPU, records.Quantity{Value: gpus})
	}
	return n
}

func TestChooseNodes(t *testing.T) {
	nodes := []yarn.Node{
		node("gpu-2:8041", "gpu-2", "RUNNING", 4), node("gpu-1:8041", "gpu-1", "RUNNING", 8),
		node("gpu-1:8042", "gpu-1", "RUNNING", 8), node("cpu-1:8041", "cpu-1", "RUNNING", 0),
		node("gpu-3:8041", "gpu-3", "UNHEALTHY", 4),
	}
	for _, tc := range []struct {
		name  string
		nodes []yarn.Node
		names []string
		want  []string
		err   string
		usage bool
	}{
		{name: "every RUNNING GPU node, sorted", nodes: nodes, want: []string{"gpu-1:8041", "gpu-1:8042", "gpu-2:8041"}},
		{name: "by id", nodes: nodes, names: []string{"gpu-2:8041"}, want: []string{"gpu-2:8041"}},
		{name: "by host: every NodeManager of it", nodes: nodes, names: []string{"gpu-1", "gpu-1:8042"}, want: []string{"gpu-1:8041", "gpu-1:8042"}},
		{name: "a node without GPUs", nodes: nodes, names: []string{"cpu-1:8041"}, usage: true,
			err: "--nodes cpu-1:8041: no RUNNING NodeManager with yarn.io/gpu has that id or host (they are: gpu-1:8041, gpu-1:8042, gpu-2:8041)"},
		{name: "no GPU node at all", nodes: nodes[3:], err: "no RUNNING NodeManager offers yarn.io/gpu"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ChooseNodes(tc.nodes, tc.names)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				var usage *cmdutil.UsageError
				assert.Equal(t, tc.usage, errors.As(err, &usage))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRequest(t *testing.T) {
	o := &Options{GPUs: 2, Memory: "256m", Queue: "gpu", Binary: "/opt/yarn-er"}
	req := o.Request([]string{"gpu-1:8041", "gpu-2:8041"})
	assert.Equal(t, "gpu", req.Queue)
	assert.Equal(t, "/opt/yarn-er", req.Binary)
	assert.Equal(t, int32(1), req.MaxAttempts, "a probe's AM is not worth a second attempt")
	require.Len(t, req.Roles, 1)
	r := req.Roles[0]
	assert.Equal(t, 2, r.Containers, "one rank per node")
	assert.Equal(t, int64(2), r.GPUs)
	assert.Equal(t, &jobspec.Placement{Spread: "node", Nodes: []string{"gpu-1:8041", "gpu-2:8041"}}, r.Placement)
	assert.True(t, r.NoDeviceLock, "the probe sees the container as YARN made it, not through yarn-er exec")
	assert.Equal(t, []string{"./yarn-er", "doctor", "probe", "--granted", "2"}, r.Command)
	// The request is one submit accepts.
	plan, err := req.Plan(nil, nil)
	require.NoError(t, err)
	assert.Nil(t, plan.Roles[0].Devices)
}

func TestWriteTable(t *testing.T) {
	ok, leak := probeOf(1, 4, 0), probeOf(1, 4, 0, 1, 2, 3)
	ok.Node, leak.Node = "gpu-1:8041", "gpu-2:8041"
	ok.Executor.Class = LinuxContainerExecutor
	d := Assemble([]string{"gpu-1:8041", "gpu-2:8041", "gpu-3:8041"}, []view.DoctorProbe{*ok, *leak}, true, "no report within --timeout 3m0s")
	var buf bytes.Buffer
	require.NoError(t, WriteTable(&buf, d))
	out := buf.String()
	lines := strings.Split(out, "\n")
	assert.Regexp(t, `^NODE +VERDICT +GIVEN +LISTED +OPEN +NODEMANAGER +CGROUP +EXECUTOR$`, lines[0])
	assert.Regexp(t, `^gpu-1:8041 +ok +1 +4 +1 +no-plugin +v1 +LinuxContainerExecutor$`, lines[1])
	assert.Regexp(t, `^gpu-2:8041 +leak +1 +4 +4 +no-plugin +v1 +DefaultContainerExecutor$`, lines[2])
	assert.Regexp(t, `^gpu-3:8041 +timeout +- +- +- +- +- +-$`, lines[3])
	assert.Contains(t, out, "\ngpu-2:8041: leak: the container was given 1 GPU(s) but can open 4")
	assert.Contains(t, out, "\n  fix: "+fixModule+"\n")
	assert.Contains(t, out, "\ngpu-3:8041: timeout: no report within --timeout 3m0s\n")
}

// What the cluster says (a node's name, the probe's texts) reaches the terminal escaped.
func TestWriteTableIsTerminalSafe(t *testing.T) {
	p := probeOf(1, 2, 0, 1)
	p.Node = cmdtest.Hostile
	p.Executor.Class = cmdtest.Hostile
	p.Errors = []string{cmdtest.Hostile}
	d := Assemble([]string{cmdtest.Hostile}, []view.DoctorProbe{*p}, false, "")
	var buf bytes.Buffer
	require.NoError(t, WriteTable(&buf, d))
	cmdtest.AssertTerminalSafe(t, buf.String())
}
