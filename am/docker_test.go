package am

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/amrm/amrmfake"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
)

// TestDockerRanks: a job with a Docker image launches every rank with the Docker runtime's
// variables (image, the coordination directory's mount, network), yarn-er exec still in front of
// the program, and the staged binary still a local resource of the container (the NodeManager
// mounts the container's working directory into the Docker container).
func TestDockerRanks(t *testing.T) {
	f := newFixture(t, 2, amrmfake.Options{})
	f.spec.Devices = &jobspec.Devices{Kind: "gpu", Amount: 1}
	f.spec.Docker = &jobspec.Docker{
		Image:            "registry.example.com:5000/ml/torch:2.4",
		Mounts:           []records.DockerMount{{Source: "/var/lib/yarn-er", Target: "/var/lib/yarn-er"}},
		Network:          "host",
		CoordinationFile: "/var/lib/yarn-er/yarn-er-coordination",
	}
	_, err := f.run(t, f.options(t))
	require.NoError(t, err)
	ls := f.cluster.Launches()
	require.Len(t, ls, 2)
	for _, l := range ls {
		env := l.Environment
		assert.Equal(t, "docker", env["YARN_CONTAINER_RUNTIME_TYPE"])
		assert.Equal(t, "registry.example.com:5000/ml/torch:2.4", env["YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"])
		assert.Equal(t, "/var/lib/yarn-er:/var/lib/yarn-er:rw", env["YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS"])
		assert.Equal(t, "host", env["YARN_CONTAINER_RUNTIME_DOCKER_CONTAINER_NETWORK"])
		assert.NotContains(t, env, "YARN_CONTAINER_RUNTIME_DOCKER_RUN_PRIVILEGED_CONTAINER", "never set unless asked; Hadoop accepts only true")
		assert.Equal(t, "/var/lib/yarn-er/yarn-er-coordination", env["YARN_ER_COORDINATION_FILE"])
		assert.Equal(t, "fast", env["TRAIN_MODE"], "the job's own variables stay")
		i := slices.Index(l.Commands, "./yarn-er")
		require.GreaterOrEqual(t, i, 0, "%v", l.Commands)
		assert.Equal(t, "exec", l.Commands[i+1], "exec runs inside the image")
		assert.Contains(t, l.LocalResources, jobspec.BinaryName)
	}
}

// TestDockerPerRole: a role's own image wins over the job's; a role of a job without an image
// runs plain; the AM's own container is never a Docker one (it is submitted by the client).
func TestDockerPerRole(t *testing.T) {
	f := newFixture(t, 0, amrmfake.Options{})
	f.withRoles(
		jobspec.Role{Name: "coord", Containers: 1, Resource: noGPU, Command: []string{"c"}},
		jobspec.Role{Name: "worker", Containers: 2, Resource: oneGPU, Devices: &jobspec.Devices{Kind: "gpu", Amount: 1}, Command: []string{"w"},
			Docker: &jobspec.Docker{Image: "library/ubuntu:22.04", Privileged: true}},
	)
	_, err := f.run(t, f.options(t))
	require.NoError(t, err)
	roles := byRole(t, f.cluster.Launches())
	require.Len(t, roles["coord"], 1)
	require.Len(t, roles["worker"], 2)
	assert.NotContains(t, roles["coord"][0].Environment, "YARN_CONTAINER_RUNTIME_TYPE")
	for _, l := range roles["worker"] {
		assert.Equal(t, "library/ubuntu:22.04", l.Environment["YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"])
		assert.Equal(t, "true", l.Environment["YARN_CONTAINER_RUNTIME_DOCKER_RUN_PRIVILEGED_CONTAINER"])
		assert.NotContains(t, l.Environment, "YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS")
	}

	// The job's image applies to the roles without one.
	f = newFixture(t, 0, amrmfake.Options{})
	f.withRoles(jobspec.Role{Name: "a", Containers: 1, Resource: noGPU, Command: []string{"a"}})
	f.spec.Docker = &jobspec.Docker{Image: "library/python:3.12", CoordinationFile: "/var/lib/yarn-er/yarn-er-coordination"}
	f.spec.Env = map[string]string{"YARN_ER_COORDINATION_FILE": "/data/mine"}
	_, err = f.run(t, f.options(t))
	require.NoError(t, err)
	ls := f.cluster.Launches()
	require.Len(t, ls, 1)
	assert.Equal(t, "library/python:3.12", ls[0].Environment["YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"])
	assert.Equal(t, "/data/mine", ls[0].Environment["YARN_ER_COORDINATION_FILE"], "the job's own --env wins")
}
