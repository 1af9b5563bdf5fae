package submit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/preflight"
	"github.com/yarn-er/yarn-er/records"
)

// TestPlanDocker: what --image and the Docker flags (and image: of a job file's roles) make of
// each role's container: the coordination directory mounted only where exec locks devices, the
// user's mounts after it, a role's own image over the job's, plain roles without one.
func TestPlanDocker(t *testing.T) {
	coord := records.DockerMount{Source: DefaultDockerCoordinationDir, Target: DefaultDockerCoordinationDir}
	passwd := records.DockerMount{Source: "/etc/passwd", Target: "/etc/passwd", ReadOnly: true}
	for _, tc := range []struct {
		name string
		req  Request
		want []*jobspec.Docker // per planned role
	}{
		{"no image", Request{GPUs: 1, Command: []string{"x"}}, []*jobspec.Docker{nil}},
		{"image with GPUs", Request{GPUs: 1, Command: []string{"x"}, Docker: &DockerRequest{Image: "library/ubuntu:22.04", Mounts: []records.DockerMount{passwd}}},
			[]*jobspec.Docker{{Image: "library/ubuntu:22.04", Mounts: []records.DockerMount{coord, passwd},
				CoordinationFile: DefaultDockerCoordinationDir + "/yarn-er-coordination"}}},
		{"image without devices: no coordination mount", Request{Command: []string{"x"}, Docker: &DockerRequest{Image: "library/ubuntu:22.04", Network: "host", Privileged: true}},
			[]*jobspec.Docker{{Image: "library/ubuntu:22.04", Network: "host", Privileged: true}}},
		{"own coordination directory", Request{GPUs: 1, Command: []string{"x"}, Docker: &DockerRequest{Image: "r/i", CoordinationDir: "/data/yarn-er"}},
			[]*jobspec.Docker{{Image: "r/i", Mounts: []records.DockerMount{{Source: "/data/yarn-er", Target: "/data/yarn-er"}}, CoordinationFile: "/data/yarn-er/yarn-er-coordination"}}},
		{"no coordination directory", Request{GPUs: 1, Command: []string{"x"}, Docker: &DockerRequest{Image: "r/i", CoordinationDir: "none"}},
			[]*jobspec.Docker{{Image: "r/i"}}},
		{"MIG slices lock devices too", Request{Resources: []string{"nvidia.com/mig-1g.10gb=1"}, Command: []string{"x"}, Docker: &DockerRequest{Image: "r/i"}},
			[]*jobspec.Docker{{Image: "r/i", Mounts: []records.DockerMount{coord}, CoordinationFile: DefaultDockerCoordinationDir + "/yarn-er-coordination"}}},
		{"roles: own image, the job's, none", Request{Roles: []RoleRequest{
			{Name: "ps", Command: []string{"p"}},
			{Name: "w", GPUs: 1, Command: []string{"w"}, Image: "r/worker:1"},
		}, Docker: &DockerRequest{Image: "r/job:1"}},
			[]*jobspec.Docker{{Image: "r/job:1"}, {Image: "r/worker:1", Mounts: []records.DockerMount{coord}, CoordinationFile: DefaultDockerCoordinationDir + "/yarn-er-coordination"}}},
		{"roles: image only on one role", Request{Roles: []RoleRequest{
			{Name: "ps", Command: []string{"p"}},
			{Name: "w", Command: []string{"w"}, Image: "r/worker:1"},
		}}, []*jobspec.Docker{nil, {Image: "r/worker:1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := tc.req.Plan(nil, nil)
			require.NoError(t, err)
			require.Len(t, plan.Roles, len(tc.want))
			for i, pr := range plan.Roles {
				assert.Equal(t, tc.want[i], pr.Docker, "role %s", pr.Name)
				if pr.Docker != nil {
					assert.NoError(t, pr.Docker.Validate("docker"), "the AM accepts it")
				}
			}
		})
	}
}

func TestPlanMIGDevices(t *testing.T) {
	plan, err := (&Request{Resources: []string{"nvidia.com/mig-1g.10gb=2"}, Command: []string{"x"}}).Plan(nil, nil)
	require.NoError(t, err)
	assert.Equal(t, &jobspec.Devices{Kind: "nvidia.com/mig-1g.10gb", Amount: 2}, plan.Roles[0].Devices,
		"exec locks two 1g.10gb slices and hands their MIG UUIDs out")
	plan, err = (&Request{Resources: []string{"nvidia.com/gpu=1"}, Command: []string{"x"}}).Plan(nil, nil)
	require.NoError(t, err)
	assert.Nil(t, plan.Roles[0].Devices, "a custom type that is no MIG profile locks nothing")
}

func TestDockerRequestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  Request
		msg  string
	}{
		{"network without image", Request{Command: []string{"x"}, Docker: &DockerRequest{Network: "host"}}, "--image: --docker-network, --docker-mount, --docker-run-privileged and --docker-coordination-dir need an image"},
		{"bad image", Request{Command: []string{"x"}, Docker: &DockerRequest{Image: "a b"}}, "--image: job spec: docker.image"},
		{"bad network", Request{Command: []string{"x"}, Docker: &DockerRequest{Image: "r/i", Network: "a;b"}}, "--docker-network:"},
		{"mount on the coordination target", Request{GPUs: 1, Command: []string{"x"}, Docker: &DockerRequest{Image: "r/i",
			Mounts: []records.DockerMount{{Source: "/x", Target: DefaultDockerCoordinationDir}}}}, "--docker-mount:"},
		{"relative coordination directory", Request{Command: []string{"x"}, Docker: &DockerRequest{Image: "r/i", CoordinationDir: "rel"}}, "--docker-coordination-dir"},
		{"bad role image", Request{Roles: []RoleRequest{{Name: "w", Command: []string{"w"}, Image: "a\nb"}}}, "--image: job spec: docker.image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.req.Plan(nil, nil)
			require.ErrorIs(t, err, ErrRequest)
			assert.ErrorContains(t, err, tc.msg)
		})
	}
}

// TestSubmitDockerPreflight: the live preflight of a --image submission checks the NodeManagers'
// Docker runtime, and refuses before anything is staged when they cannot run it.
func TestSubmitDockerPreflight(t *testing.T) {
	rm := newFakeRM(t, "")
	c := testClient(t, rm, testHadoop(t, map[string]string{
		"yarn.nodemanager.container-executor.class": "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor",
	}))
	_, err := c.Submit(context.Background(), Request{Command: []string{"true"}, Docker: &DockerRequest{Image: "library/ubuntu:22.04"}}, nil)
	require.ErrorIs(t, err, ErrPreflight)
	var pe *PreflightError
	require.ErrorAs(t, err, &pe)
	var msgs []string
	for _, ch := range pe.Report.Checks {
		if ch.ID == preflight.IDDockerRuntime && ch.Status == preflight.StatusFail {
			msgs = append(msgs, ch.Message)
		}
	}
	require.Len(t, msgs, 1, "%v", msgs)
	assert.Contains(t, msgs[0], "does not allow docker")

	// Allowed: the preflight passes (and the submission fails later, at staging).
	c = testClient(t, rm, testHadoop(t, map[string]string{
		"yarn.nodemanager.container-executor.class":       "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor",
		"yarn.nodemanager.runtime.linux.allowed-runtimes": "default,docker",
	}))
	_, err = c.Submit(context.Background(), Request{Command: []string{"true"}, Docker: &DockerRequest{Image: "library/ubuntu:22.04"}}, nil)
	assert.NotErrorIs(t, err, ErrPreflight)
}

// TestDynamicInterpreter: the static build (CGO_ENABLED=0) has no program interpreter, a cgo
// build has the C library's loader (where a C compiler is installed); not-ELF files are not taken
// for dynamic binaries.
func TestDynamicInterpreter(t *testing.T) {
	dir := t.TempDir()
	build := func(name string, cgo string) string {
		out := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", out, "./testdata/hello")
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, string(b))
		return out
	}
	assert.Empty(t, DynamicInterpreter(build("static", "0")))
	if _, err := exec.LookPath("gcc"); err == nil {
		assert.Contains(t, DynamicInterpreter(build("dynamic", "1")), "ld-linux")
	}
	notELF := filepath.Join(dir, "script")
	require.NoError(t, os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755))
	assert.Empty(t, DynamicInterpreter(notELF))
	assert.Empty(t, DynamicInterpreter(filepath.Join(dir, "missing")))
}

// TestAMContextStaysPlain: with Docker ranks the ApplicationMaster's own container carries none of
// the Docker runtime's variables (it runs on the NodeManager as any container).
func TestAMContextStaysPlain(t *testing.T) {
	spec := &jobspec.Spec{Name: "d", Binary: jobspec.LocalFile{Name: "yarn-er", URL: "hdfs://nn/b", Size: 1, MtimeMillis: 1, Type: "FILE"},
		Docker: &jobspec.Docker{Image: "library/ubuntu:22.04"}}
	req := Request{Env: map[string]string{"MODE": "x"}, Docker: &DockerRequest{Image: "library/ubuntu:22.04"}}
	sc := amContext(req, "application_1_0001", spec, jobspec.LocalFile{Name: jobspec.FileName, URL: "hdfs://nn/s", Size: 1, MtimeMillis: 1, Type: "FILE"}, nil)
	assert.Equal(t, map[string]string{jobspec.EnvSpecFile: jobspec.FileName}, sc.AMContainerSpec.Environment)
}
