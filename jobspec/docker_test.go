package jobspec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
)

func TestDockerValidate(t *testing.T) {
	good := func() *Docker {
		return &Docker{Image: "registry.example.com:5000/ml/torch:2.4",
			Mounts:           []records.DockerMount{{Source: "/var/lib/yarn-er", Target: "/var/lib/yarn-er"}},
			CoordinationFile: "/var/lib/yarn-er/yarn-er-coordination"}
	}
	for _, tc := range []struct {
		name    string
		edit    func(*Docker)
		wantErr string
	}{
		{"good", func(*Docker) {}, ""},
		{"no image", func(d *Docker) { d.Image = "" }, "docker.image: empty"},
		{"image with a space", func(d *Docker) { d.Image = "a b" }, "docker.image"},
		{"image with a comma", func(d *Docker) { d.Image = "a,b" }, "docker.image"},
		{"long image", func(d *Docker) { d.Image = strings.Repeat("a", MaxImageLength+1) }, "at most 1024"},
		{"relative mount", func(d *Docker) { d.Mounts[0].Source = "rel" }, "docker.mounts"},
		{"two mounts on one target", func(d *Docker) { d.Mounts = append(d.Mounts, d.Mounts[0]) }, "a second mount"},
		{"bad network", func(d *Docker) { d.Network = "a b" }, "docker.network"},
		{"relative coordination file", func(d *Docker) { d.CoordinationFile = "x" }, "docker.coordinationFile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			s.Docker = good()
			tc.edit(s.Docker)
			_, err := s.Marshal()
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalid)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

func TestDockerRoundTripAndRoles(t *testing.T) {
	s := validSpec()
	s.Docker = &Docker{Image: "library/ubuntu:22.04", Network: "host", Privileged: true,
		Mounts: []records.DockerMount{{Source: "/etc/passwd", Target: "/etc/passwd", ReadOnly: true}}}
	b, err := s.Marshal()
	require.NoError(t, err)
	assert.Contains(t, string(b), `"docker": {`)
	back, err := Parse(b)
	require.NoError(t, err)
	assert.Equal(t, s.Docker, back.Docker)
	assert.Equal(t, s.Docker, back.RoleDocker(back.RoleList()[0]), "the one role of a spec without roles runs in the job's image")

	env := back.Docker.Env()
	assert.Equal(t, map[string]string{
		"YARN_CONTAINER_RUNTIME_TYPE":                            "docker",
		"YARN_CONTAINER_RUNTIME_DOCKER_IMAGE":                    "library/ubuntu:22.04",
		"YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS":                   "/etc/passwd:/etc/passwd:ro",
		"YARN_CONTAINER_RUNTIME_DOCKER_CONTAINER_NETWORK":        "host",
		"YARN_CONTAINER_RUNTIME_DOCKER_RUN_PRIVILEGED_CONTAINER": "true",
	}, env)
	assert.Nil(t, (*Docker)(nil).Env())
	assert.Equal(t, "image library/ubuntu:22.04, mount /etc/passwd:/etc/passwd:ro, network host, privileged", back.Docker.String())

	own := &Docker{Image: "library/python:3.12"}
	assert.Equal(t, own, back.RoleDocker(Role{Docker: own}))

	// An older AM refuses the field instead of running the ranks outside the image.
	assert.Contains(t, string(b), "docker")
}

func TestMIGDevicesKind(t *testing.T) {
	for kind, ok := range map[string]bool{
		"nvidia.com/mig-1g.10gb": true, "mig-3g.40gb": true, "gpu": true, "fpga": true,
		"nvidia.com/mig-": false, "nvidia.com/gpu": false, "nvidia.com/mig-1g.10gb+me": false, "mig": false,
	} {
		s := validSpec()
		s.Devices = &Devices{Kind: kind, Amount: 1}
		_, err := s.Marshal()
		if ok {
			assert.NoError(t, err, kind)
		} else {
			assert.ErrorContains(t, err, "devices.kind", kind)
		}
	}
}
