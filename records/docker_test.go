package records

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDockerMount(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    DockerMount
		wantErr string
	}{
		{in: "/var/lib/yarn-er:/var/lib/yarn-er:rw", want: DockerMount{Source: "/var/lib/yarn-er", Target: "/var/lib/yarn-er"}},
		{in: "/etc/passwd:/etc/passwd:ro", want: DockerMount{Source: "/etc/passwd", Target: "/etc/passwd", ReadOnly: true}},
		{in: "/data/:/mnt/data", want: DockerMount{Source: "/data", Target: "/mnt/data"}},
		{in: "/data", wantErr: "want SOURCE:TARGET"},
		{in: "/a:/b:ro:x", wantErr: "want SOURCE:TARGET"},
		{in: "/a:/b:rslave", wantErr: `mode "rslave": want ro or rw`},
		{in: "data:/b", wantErr: `source "data" is not an absolute path`},
		{in: "/a:b", wantErr: `target "b" is not an absolute path`},
		{in: "/a,b:/b", wantErr: "contains ','"},
		{in: "/a=b:/b", wantErr: "contains ','"},
		{in: "/a/../etc:/b", wantErr: `contains ".."`},
		{in: "", wantErr: "want SOURCE:TARGET"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseDockerMount(tc.in)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				var me *DockerMountError
				assert.ErrorAs(t, err, &me)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestFormatDockerMounts(t *testing.T) {
	got, err := FormatDockerMounts([]DockerMount{
		{Source: "/var/lib/yarn-er", Target: "/var/lib/yarn-er"},
		{Source: "/etc/passwd", Target: "/etc/passwd", ReadOnly: true},
	})
	require.NoError(t, err)
	assert.Equal(t, "/var/lib/yarn-er:/var/lib/yarn-er:rw,/etc/passwd:/etc/passwd:ro", got)

	_, err = FormatDockerMounts([]DockerMount{{Source: "/a", Target: "/x"}, {Source: "/b", Target: "/x/"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a second mount on the target /x")

	_, err = FormatDockerMounts([]DockerMount{{Source: "a", Target: "/x"}})
	assert.ErrorContains(t, err, "not an absolute path")

	many := make([]DockerMount, 65)
	for i := range many {
		many[i] = DockerMount{Source: "/a", Target: "/t" + strings.Repeat("x", i)}
	}
	_, err = FormatDockerMounts(many)
	assert.ErrorContains(t, err, "at most 64")

	empty, err := FormatDockerMounts(nil)
	require.NoError(t, err)
	assert.Empty(t, empty)
}

func TestImageTrusted(t *testing.T) {
	for _, tc := range []struct {
		image      string
		registries []string
		want       string
		ok         bool
	}{
		{"library/ubuntu:22.04", []string{"library"}, "library", true},
		{"ubuntu:22.04", []string{"library"}, "", false}, // container-executor compares the name as given
		{"registry.example.com:5000/ml/torch:2.4", []string{"centos", "registry.example.com:5000"}, "registry.example.com:5000", true},
		{"registry.example.com:5000/ml/torch:2.4", []string{"registry.example.com:5000/"}, "registry.example.com:5000/", true},
		{"registry.example.com:50001/x", []string{"registry.example.com:5000"}, "", false},
		{"local/ubuntu", nil, "", false},
		{"local/ubuntu", []string{" ", "local"}, "local", true},
	} {
		t.Run(tc.image, func(t *testing.T) {
			got, ok := ImageTrusted(tc.image, tc.registries)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

// FuzzParseDockerMount: what the parser accepts formats back to itself, and never carries a
// separator of YARN's mount list.
func FuzzParseDockerMount(f *testing.F) {
	for _, s := range []string{"/a:/b", "/a:/b:ro", "/a:/b:rw", "a:/b", "/a/../b:/c", "/a,b:/c", ":", "/:/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseDockerMount(s)
		if err != nil {
			return
		}
		if strings.ContainsAny(m.Source+m.Target, ",=:\n") {
			t.Fatalf("ParseDockerMount(%q) = %+v carries a separator", s, m)
		}
		back, err := ParseDockerMount(m.String())
		if err != nil || back != m {
			t.Fatalf("round trip of %q: %+v, %v", s, back, err)
		}
	})
}
