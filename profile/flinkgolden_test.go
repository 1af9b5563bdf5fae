package profile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/records"
)

// goldenRecord is one file written by docker/flink-golden (Flink's own classes): the container
// Flink's YARN ApplicationMaster requests for a configuration, or Flink's exception.
type goldenRecord struct {
	MemoryMB  *int64 `json:"memoryMB"`
	VCores    int64  `json:"vcores"`
	Resources []struct {
		Name      string `json:"name"`
		SentValue int64  `json:"sentValue"`
		SentUnits string `json:"sentUnits"`
		Value     int64  `json:"value"`
		Units     string `json:"units"`
	} `json:"resources"`
	Memory     map[string]int64 `json:"memory"`
	Error      *goldenError     `json:"error"`
	JobManager struct {
		MemoryMB     *int64       `json:"memoryMB"`
		VCores       int64        `json:"vcores"`
		JVMHeap      int64        `json:"jvmHeap"`
		OffHeap      int64        `json:"offHeap"`
		JVMMetaspace int64        `json:"jvmMetaspace"`
		JVMOverhead  int64        `json:"jvmOverhead"`
		TotalProcess int64        `json:"totalProcess"`
		Error        *goldenError `json:"error"`
	} `json:"jobManager"`
}

type goldenError struct {
	Class   string `json:"class"`
	Message string `json:"message"`
}

// TestFlinkGolden compares yarn-er with the answers recorded from Flink 1.20.0 and 2.0.0
// (profile/testdata/flink-golden/<version>/; re-record with `make flink-golden`).
func TestFlinkGolden(t *testing.T) {
	root := filepath.Join("testdata", "flink-golden")
	configs, err := os.ReadDir(filepath.Join(root, "configs"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(configs), 40)
	for _, version := range []struct {
		dir string
		v   FlinkVersion
	}{{"1.20.0", Flink1}, {"2.0.0", Flink2}} {
		for _, c := range configs {
			name := c.Name()
			t.Run(version.dir+"/"+name, func(t *testing.T) {
				data, err := os.ReadFile(filepath.Join(root, version.dir, name+".json"))
				require.NoError(t, err, "no recording: run make flink-golden")
				var want goldenRecord
				require.NoError(t, json.Unmarshal(data, &want))
				checkGolden(t, filepath.Join(root, "configs", name), version.v, &want)
			})
		}
	}
}

func checkGolden(t *testing.T, dir string, v FlinkVersion, want *goldenRecord) {
	path := dir
	if v == Flink2 {
		// Flink 2.x reads only config.yaml.
		path = filepath.Join(dir, conf.FlinkYAMLFile)
		if _, err := os.Stat(path); err != nil {
			require.NotNil(t, want.Error)
			assert.Contains(t, want.Error.Message, "config.yaml' (")
			assert.Contains(t, want.Error.Message, "does not exist")
			return
		}
	}
	fc, err := conf.LoadFlink(conf.FlinkOptions{Path: path, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	checkGoldenJobManager(t, dir, fc, v, want)

	var opts TranslateOptions
	opts.FlinkVersion = v
	xml := filepath.Join(dir, "resource-types.xml")
	if _, err := os.Stat(xml); err == nil {
		hc, err := conf.LoadHadoop(conf.HadoopOptions{Dir: dir, Getenv: func(string) string { return "" }})
		require.NoError(t, err)
		types, problems := LoadResourceTypes(hc)
		if want.Error != nil && strings.Contains(want.Error.Class, "YarnRuntimeException") {
			assert.NotEmpty(t, Errors(problems), "Hadoop refuses these resource types: %s", want.Error.Message)
			return
		}
		require.Empty(t, Errors(problems))
		opts.ResourceTypes = types
	}
	tr, err := Translate(fc, opts)
	mem, _, ref := DeriveTaskManagerMemory(fc, v)

	if want.Error != nil {
		require.Error(t, err, "Flink refuses this configuration: %s", want.Error.Message)
		// yarn-er gives Flink's message word for word: for the memory the refusal itself, for
		// the rest (cores, amounts) within the error.
		if ref != nil {
			assert.Equal(t, want.Error.Message, ref.FlinkMessage)
		} else {
			assert.Contains(t, err.Error(), want.Error.Message)
		}
		return
	}
	require.NoError(t, err)
	require.Nil(t, ref, "yarn-er refuses what Flink accepts")
	require.NotNil(t, mem)
	require.NotNil(t, want.MemoryMB)
	got, ok := tr.Resource.Get(records.MemoryMB)
	assert.True(t, ok)
	assert.Equal(t, *want.MemoryMB, got, "memory-mb")
	vc, _ := tr.Resource.Get(records.VCores)
	assert.Equal(t, want.VCores, vc, "vcores")
	require.NotNil(t, tr.Memory)
	assert.Equal(t, map[string]int64{
		"frameworkHeap": tr.Memory.FrameworkHeap, "frameworkOffHeap": tr.Memory.FrameworkOffHeap,
		"taskHeap": tr.Memory.TaskHeap, "taskOffHeap": tr.Memory.TaskOffHeap,
		"network": tr.Memory.Network, "managed": tr.Memory.Managed,
		"jvmMetaspace": tr.Memory.JVMMetaspace, "jvmOverhead": tr.Memory.JVMOverhead,
		"totalFlink": tr.Memory.TotalFlink, "totalProcess": tr.Memory.TotalProcess,
	}, want.Memory)
	var names []string
	for _, r := range want.Resources {
		if r.SentValue == 0 {
			continue // a declared type Flink does not ask for (every Resource carries all types)
		}
		names = append(names, r.Name)
		sent, ok := tr.Resource.Get(r.Name)
		assert.True(t, ok, "%s requested", r.Name)
		assert.Equal(t, r.SentValue, sent, "%s as Flink sends it", r.Name)
		if opts.ResourceTypes != nil {
			// what the ResourceManager reads, in the declared unit
			i := slices.IndexFunc(tr.RMRequest, func(x RMResource) bool { return x.Name == r.Name })
			require.GreaterOrEqual(t, i, 0, "%s in the ResourceManager's view", r.Name)
			assert.Equal(t, RMResource{Name: r.Name, Sent: r.SentValue, Value: r.Value, Units: r.Units}, tr.RMRequest[i])
			assert.Equal(t, r.Units != "",
				slices.ContainsFunc(tr.Problems, func(p Problem) bool { return p.Code == CodeResourceTypeUnit }))
		}
	}
	var gotNames []string
	for _, r := range tr.Resource.All() {
		if r.Name != records.MemoryMB && r.Name != records.VCores {
			gotNames = append(gotNames, r.Name)
		}
	}
	assert.ElementsMatch(t, names, gotNames)
}

// checkGoldenJobManager compares the ApplicationMaster container with Flink's client.
// goldenEnv reads the configuration's env file (KEY=VALUE lines: the environment the recorder ran
// Flink with, FLINK_JM_HEAP standing for the client's); nil when there is none.
func goldenEnv(t *testing.T, dir string) func(string) string {
	data, err := os.ReadFile(filepath.Join(dir, "env"))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	env := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			env[k] = v
		}
	}
	return func(k string) string { return env[k] }
}

func checkGoldenJobManager(t *testing.T, dir string, fc *conf.FlinkConfig, v FlinkVersion, want *goldenRecord) {
	t.Helper()
	jm, _, ref := DeriveJobManagerMemoryEnv(fc, v, goldenEnv(t, dir))
	if want.JobManager.Error != nil {
		require.NotNil(t, ref, "Flink refuses the JobManager: %s", want.JobManager.Error.Message)
		assert.Equal(t, want.JobManager.Error.Message, ref.FlinkMessage)
		return
	}
	require.Nil(t, ref, "yarn-er refuses the JobManager Flink accepts")
	require.NotNil(t, want.JobManager.MemoryMB)
	assert.Equal(t, *want.JobManager.MemoryMB, jm.ContainerMB, "JobManager memory-mb")
	assert.Equal(t, want.JobManager.VCores, jm.VCores, "JobManager vcores")
	assert.Equal(t, []int64{want.JobManager.JVMHeap, want.JobManager.OffHeap, want.JobManager.JVMMetaspace, want.JobManager.JVMOverhead, want.JobManager.TotalProcess},
		[]int64{jm.JVMHeap, jm.OffHeap, jm.JVMMetaspace, jm.JVMOverhead, jm.TotalProcess})
}
