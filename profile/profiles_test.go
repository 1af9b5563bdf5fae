package profile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/records"
)

func gpuTypes(t *testing.T) *ResourceTypes {
	t.Helper()
	types, problems := LoadResourceTypes(hadoopConf("yarn.resource-types", "yarn.io/gpu,example.com/bw",
		"yarn.resource-types.example.com/bw.units", "M"))
	require.Empty(t, problems)
	return types
}

const goodProfiles = `{
  "default": {"memory-mb": 2048, "vcores": 2},
  "small": {"memory-mb": "1Gi", "vcores": 1},
  "gpu": {"memory-mb": 8192, "vcores": 4, "yarn.io/gpu": 1, "example.com/bw": "2G"},
  "gpu-big": {"memory-mb": 16384, "vcores": 8, "yarn.io/gpu": 2}
}`

func TestParseResourceProfiles(t *testing.T) {
	p, err := ParseResourceProfiles("resource-profiles.json", []byte(goodProfiles), gpuTypes(t))
	require.NoError(t, err)
	assert.Equal(t, []string{"default", "gpu", "gpu-big", "small"}, p.Names())
	small, ok := p.Get("small")
	require.True(t, ok)
	assert.Equal(t, "<memory-mb:1024, vcores:1>", small.String(), "1Gi in memory-mb's unit")
	gpu, _ := p.Get("gpu")
	assert.Equal(t, int64(2000), gpu.Value("example.com/bw"), "2G in the type's unit M")

	for _, tc := range []struct {
		want string
		v    records.Resources
		ok   bool
	}{
		{"small", records.NewResources(512, 1), true},
		{"default", records.NewResources(2048, 2), true},
		{"gpu", records.ResourcesOf(records.Resource{Name: records.MemoryMB, Value: 4096, Units: "Mi"}, records.Resource{Name: records.VCores, Value: 1},
			records.Resource{Name: records.GPU, Value: 1}), true},
		{"gpu-big", records.ResourcesOf(records.Resource{Name: records.MemoryMB, Value: 4096, Units: "Mi"}, records.Resource{Name: records.VCores, Value: 1},
			records.Resource{Name: records.GPU, Value: 2}), true},
		{"", records.NewResources(65536, 1), false},
	} {
		got, ok := p.Smallest(tc.v)
		assert.Equal(t, tc.ok, ok, tc.v.String())
		assert.Equal(t, tc.want, got, tc.v.String())
	}
}

func TestParseResourceProfilesRefuses(t *testing.T) {
	for _, tc := range []struct{ name, doc, profile, key, msg string }{
		{"not JSON", `{`, "", "", "not a JSON object"},
		{"no default", `{"small": {"memory-mb": 1024, "vcores": 1}}`, "", "", `no "default" profile`},
		{"maximum", `{"default": {"memory-mb": 1024, "vcores": 1}, "maximum": {"memory-mb": 1, "vcores": 1}}`, "maximum", "", "not allowed"},
		{"no vcores", `{"default": {"memory-mb": 1024}}`, "default", "vcores", "every profile needs memory-mb and vcores"},
		{"undeclared", `{"default": {"memory-mb": 1024, "vcores": 1, "nvidia.com/gpu": 1}}`, "default", "nvidia.com/gpu", "not declared"},
		{"bad amount", `{"default": {"memory-mb": "lots", "vcores": 1}}`, "default", "memory-mb", "lots"},
		{"negative", `{"default": {"memory-mb": -1, "vcores": 1}}`, "default", "memory-mb", "0 or more"},
		{"fraction", `{"default": {"memory-mb": 1.5, "vcores": 1}}`, "default", "memory-mb", "whole number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseResourceProfiles("rp.json", []byte(tc.doc), gpuTypes(t))
			var pe *ProfilesError
			require.ErrorAs(t, err, &pe)
			assert.True(t, errors.Is(err, ErrProfiles))
			assert.Equal(t, "rp.json", pe.Path)
			assert.Equal(t, tc.profile, pe.Profile)
			assert.Equal(t, tc.key, pe.Key)
			assert.Contains(t, err.Error(), tc.msg)
			assert.NotEmpty(t, pe.Fix)
		})
	}
}

func TestLoadResourceProfiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	write("yarn-site.xml", `<configuration><property><name>yarn.resourcemanager.resource-profiles.enabled</name><value>true</value></property></configuration>`)
	hc, err := conf.LoadHadoop(conf.HadoopOptions{Dir: dir, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	_, err = LoadResourceProfiles(hc, nil)
	assert.ErrorContains(t, err, filepath.Join(dir, "resource-profiles.json"), "enabled, and no file beside the configuration")
	write("resource-profiles.json", `{"default": {"memory-mb": 1024, "vcores": 1}}`)
	p, err := LoadResourceProfiles(hc, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"default"}, p.Names())

	// Disabled: nothing is read.
	p, err = LoadResourceProfiles(hadoopConf(), nil)
	assert.NoError(t, err)
	assert.Nil(t, p)
}

func FuzzParseResourceProfiles(f *testing.F) {
	f.Add([]byte(goodProfiles))
	f.Add([]byte(`{"default": {"memory-mb": "1Ti", "vcores": 1}}`))
	f.Add([]byte(`{"default": {"memory-mb": 1e99, "vcores": null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		types := DefaultResourceTypes()
		p, err := ParseResourceProfiles("fuzz.json", data, types)
		if err != nil {
			var pe *ProfilesError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is no *ProfilesError", err)
			}
			return
		}
		if _, ok := p.Get(DefaultProfile); !ok {
			t.Fatal("accepted without a default profile")
		}
		for _, n := range p.Names() {
			v, _ := p.Get(n)
			if _, ok := v.Quantity(records.MemoryMB); !ok {
				t.Fatalf("profile %s accepted without memory-mb", n)
			}
		}
	})
}
