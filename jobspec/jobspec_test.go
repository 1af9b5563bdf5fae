package jobspec

import (
	"encoding/json"
	"errors"
	"github.com/yarn-er/yarn-er/records"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func validSpec() *Spec {
	return &Spec{
		Version:            Version,
		Name:               "train",
		User:               "alice",
		SchedulerAddresses: []string{"rm1:8030", "rm2:8030"},
		Containers:         8,
		Restarts:           2,
		Priority:           1,
		Resource: []Quantity{
			{Name: records.MemoryMB, Value: 4096, Units: "Mi"},
			{Name: records.VCores, Value: 4},
			{Name: "yarn.io/gpu", Value: 1},
		},
		Devices: &Devices{Kind: "gpu", Amount: 1},
		Command: []string{"python", "train.py"},
		Env:     map[string]string{"B": "2", "A": "1"},
		Binary:  LocalFile{Name: BinaryName, URL: "hdfs://nn:8020/user/alice/.yarn-er/app_1/yarn-er", Size: 10, MtimeMillis: 1700000000123, Type: records.LocalFile},
		Files: []LocalFile{
			{Name: "data.tgz", URL: "hdfs://nn:8020/user/alice/.yarn-er/app_1/data.tgz", Size: 3, MtimeMillis: 1700000000124, Type: records.LocalArchive},
		},
		StagingDir: "hdfs://nn:8020/user/alice/.yarn-er/app_1",
	}
}

func TestRoundTrip(t *testing.T) {
	s := validSpec()
	b, err := s.Marshal()
	require.NoError(t, err)
	got, err := Parse(b)
	require.NoError(t, err)
	assert.Equal(t, s, got)
	q, ok := got.Quantity("yarn.io/gpu")
	require.True(t, ok)
	assert.Equal(t, int64(1), q.Value)
	assert.Equal(t, []string{"A", "B"}, got.EnvNames())
}

func TestParseRefuses(t *testing.T) {
	good, err := validSpec().Marshal()
	require.NoError(t, err)
	tests := []struct {
		name, doc, field, msg string
	}{
		{"not json", "{", "", "not JSON"},
		{"no version", `{"name":"x"}`, "version", "missing"},
		{"newer version", `{"version":3}`, "version", "same yarn-er version"},
		{"unknown field", strings.Replace(string(good), `"name"`, `"bogus": 1, "name"`, 1), "", "unknown field"},
		{"trailing", string(good) + "{}", "", "after top-level value"},
		{"field twice", strings.Replace(string(good), `"containers": 8`, `"containers": 8, "containers": 9`, 1), "containers", "given twice: give it once"},
		{"field twice in another case", strings.Replace(string(good), `"containers": 8`, `"containers": 8, "Containers": 1000`, 1), "Containers",
			`given twice, as "containers" and "Containers"`},
		{"nested field twice", strings.Replace(string(good), `"name": "yarn.io/gpu"`, `"name": "yarn.io/gpu", "NAME": "x"`, 1), "resource[2].NAME", "given twice"},
		{"variable twice", strings.Replace(string(good), `"A": "1"`, `"A": "1", "A": "2"`, 1), `env["A"]`, "given twice"},
		{"NUL in a command argument", strings.Replace(string(good), `"train.py"`, `"train\u0000.py"`, 1), "command[1]", "NUL byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc))
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrInvalid))
			var se *Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.field, se.Field)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
	_, err = Parse(make([]byte, MaxSize+1))
	assert.ErrorContains(t, err, "limit")

	// Variable names are case sensitive: A and a are two variables.
	s, err := Parse([]byte(strings.Replace(string(good), `"A": "1"`, `"A": "1", "a": "2"`, 1)))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"A": "1", "a": "2", "B": "2"}, s.Env)
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		mut   func(*Spec)
		field string
	}{
		{"no scheduler", func(s *Spec) { s.SchedulerAddresses = nil }, "schedulerAddresses"},
		{"bad scheduler", func(s *Spec) { s.SchedulerAddresses = []string{"rm"} }, "schedulerAddresses[0]"},
		{"bad port", func(s *Spec) { s.SchedulerAddresses = []string{"rm:80x"} }, "schedulerAddresses[0]"},
		{"no containers", func(s *Spec) { s.Containers = 0 }, "containers"},
		{"containers above the hard bound", func(s *Spec) { s.Containers = MaxContainers + 1 }, "containers"},
		{"negative restarts", func(s *Spec) { s.Restarts = -1 }, "restarts"},
		{"negative priority", func(s *Spec) { s.Priority = -1 }, "priority"},
		{"no memory", func(s *Spec) { s.Resource = s.Resource[1:] }, "resource"},
		{"dup resource", func(s *Spec) { s.Resource = append(s.Resource, s.Resource[2]) }, "resource[3].name"},
		{"negative amount", func(s *Spec) { s.Resource[2].Value = -1 }, "resource[2].value"},
		{"empty resource name", func(s *Spec) { s.Resource[2].Name = "" }, "resource[2].name"},
		{"bad device kind", func(s *Spec) { s.Devices.Kind = "tpu" }, "devices.kind"},
		{"negative devices", func(s *Spec) { s.Devices.Amount = -2 }, "devices.amount"},
		{"no command", func(s *Spec) { s.Command = nil }, "command"},
		{"empty program", func(s *Spec) { s.Command = []string{""} }, "command"},
		{"bad env", func(s *Spec) { s.Env["A=B"] = "x" }, "env"},
		{"command not UTF-8", func(s *Spec) { s.Command = []string{"python", "caf\xe9.py"} }, "command[1]"},
		{"command with NUL", func(s *Spec) { s.Command = []string{"python", "a\x00b"} }, "command[1]"},
		{"env value with NUL", func(s *Spec) { s.Env["A"] = "1\x00" }, `env["A"]`},
		{"env value not UTF-8", func(s *Spec) { s.Env["A"] = "\xff" }, `env["A"]`},
		{"env name not UTF-8", func(s *Spec) { s.Env["\xff"] = "1" }, "env"},
		{"file url not UTF-8", func(s *Spec) { s.Files[0].URL = "hdfs://nn/\xe9" }, "files[0].url"},
		{"binary name not UTF-8", func(s *Spec) { s.Binary.Name = "\xe9" }, "binary.name"},
		{"staging dir not UTF-8", func(s *Spec) { s.StagingDir = "hdfs://nn/\xe9" }, "stagingDir"},
		{"user not UTF-8", func(s *Spec) { s.User = "\xe9" }, "user"},
		{"binary without mtime", func(s *Spec) { s.Binary.MtimeMillis = 0 }, "binary.mtimeMillis"},
		{"file with slash", func(s *Spec) { s.Files[0].Name = "a/b" }, "files[0].name"},
		{"file dotdot", func(s *Spec) { s.Files[0].Name = ".." }, "files[0].name"},
		{"file clashes", func(s *Spec) { s.Files[0].Name = BinaryName }, "files[0].name"},
		{"file type", func(s *Spec) { s.Files[0].Type = "PATTERN" }, "files[0].type"},
		{"file visibility", func(s *Spec) { s.Files[0].Visibility = "WORLD" }, "files[0].visibility"},
		{"file no url", func(s *Spec) { s.Files[0].URL = "" }, "files[0].url"},
		{"file negative size", func(s *Spec) { s.Files[0].Size = -1 }, "files[0].size"},
		{"no staging", func(s *Spec) { s.StagingDir = "" }, "stagingDir"},
		{"staging NameNode not host:port", func(s *Spec) { s.StagingNameNodes = []string{"h1:8020", "h2"} }, "stagingNameNodes[1]"},
		{"too many staging NameNodes", func(s *Spec) { s.StagingNameNodes = make([]string, MaxStagingNameNodes+1) }, "stagingNameNodes"},
		{"negative heartbeat", func(s *Spec) { s.HeartbeatMillis = -1 }, "heartbeatMillis"},
		{"tokens without principal", func(s *Spec) { s.Tokens = &TokenRefresh{KeytabFile: "k", NameNodePrincipal: "nn/_HOST@R"} }, "tokens.principal"},
		{"tokens keytab path", func(s *Spec) {
			s.Tokens = &TokenRefresh{Principal: "a@R", KeytabFile: "../k", NameNodePrincipal: "nn/_HOST@R"}
		}, "tokens.keytabFile"},
		{"tokens krb5.conf path", func(s *Spec) {
			s.Tokens = &TokenRefresh{Principal: "a@R", KeytabFile: "k", Krb5ConfFile: "/etc/krb5.conf", NameNodePrincipal: "nn/_HOST@R"}
		}, "tokens.krb5ConfFile"},
		{"tokens without NameNode principal", func(s *Spec) { s.Tokens = &TokenRefresh{Principal: "a@R", KeytabFile: "k"} }, "tokens.nameNodePrincipal"},
		{"tokens negative interval", func(s *Spec) {
			s.Tokens = &TokenRefresh{Principal: "a@R", KeytabFile: "k", NameNodePrincipal: "nn/_HOST@R", RenewIntervalMillis: -1}
		}, "tokens.renewIntervalMillis"},
		{"negative max attempts", func(s *Spec) { s.MaxAttempts = -1 }, "maxAttempts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec()
			tt.mut(s)
			err := s.Validate()
			var se *Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.field, se.Field)
		})
	}
}

func FuzzParse(f *testing.F) {
	good, err := validSpec().Marshal()
	require.NoError(f, err)
	f.Add(good)
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":1,"containers":-1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b)
		if err != nil {
			return
		}
		// Whatever parses must survive a round trip unchanged.
		out, err := s.Marshal()
		require.NoError(t, err)
		s2, err := Parse(out)
		require.NoError(t, err)
		assert.Equal(t, s, s2)
	})
}

func TestValidEnvName(t *testing.T) {
	for name, want := range map[string]bool{
		"PATH": true, "lower_and_1": true, "CUDA_VISIBLE_DEVICES": true, "with space": true,
		"": false, "A=B": false, "=": false, "A\x00": false,
	} {
		assert.Equal(t, want, ValidEnvName(name), "%q", name)
	}
}

// A spec Parse would refuse as too large is refused by Marshal already.
func TestMarshalTooLarge(t *testing.T) {
	s := validSpec()
	s.Name = strings.Repeat("n", MaxSize)
	_, err := s.Marshal()
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "larger than the 4194304-byte limit the ApplicationMaster reads")

	s.Name = strings.Repeat("n", MaxSize/2)
	b, err := s.Marshal()
	require.NoError(t, err)
	_, err = Parse(b)
	assert.NoError(t, err)
}

func rolesSpec() *Spec {
	s := validSpec()
	res := s.Resource
	s.Resource, s.Devices, s.Command, s.Restarts = nil, nil, nil, 0
	s.Containers = 3
	s.GangTimeoutMillis = 60000
	s.Roles = []Role{
		{Name: "coordinator", Containers: 1, Priority: 1, Resource: res[:2], Command: []string{"sh", "-c", "sleep 1"}},
		{Name: "worker", Containers: 2, Priority: 2, Restarts: 1, Resource: res, Devices: &Devices{Kind: "gpu", Amount: 1},
			Command: []string{"python", "train.py"}, Env: map[string]string{"X": "1"}, Gang: "job", DependsOn: []string{"coordinator"},
			Framework: FrameworkPyTorch, Placement: &Placement{Spread: "node"}},
	}
	return s
}

func TestRolesRoundTrip(t *testing.T) {
	s := rolesSpec()
	b, err := s.Marshal()
	require.NoError(t, err)
	got, err := Parse(b)
	require.NoError(t, err)
	assert.Equal(t, s, got)
	assert.Equal(t, s.Roles, got.RoleList())
	assert.Equal(t, int64(60000), got.GangTimeout())

	// A format-1 spec (no roles) is still read: one role, DefaultRole.
	v1 := validSpec()
	v1.Version = 1
	b, err = json.Marshal(v1)
	require.NoError(t, err)
	old, err := Parse(b)
	require.NoError(t, err)
	roles := old.RoleList()
	require.Len(t, roles, 1)
	assert.Equal(t, DefaultRole, roles[0].Name)
	assert.Equal(t, 8, roles[0].Containers)
	assert.Equal(t, []string{"python", "train.py"}, roles[0].Command)
	assert.Equal(t, int64(DefaultGangTimeoutMillis), old.GangTimeout())
}

func TestValidateRoles(t *testing.T) {
	tests := []struct {
		name  string
		mut   func(*Spec)
		field string
		msg   string
	}{
		{"roles in format 1", func(s *Spec) { s.Version = 1 }, "roles", "format 1 has no roles"},
		{"top-level command with roles", func(s *Spec) { s.Command = []string{"x"} }, "command", "each role has its own"},
		{"bad role name", func(s *Spec) { s.Roles[0].Name = "a b" }, "roles[0].name", "letters, digits"},
		{"role twice", func(s *Spec) { s.Roles[1].Name = "coordinator" }, "roles[1].name", "used twice"},
		{"no ranks", func(s *Spec) { s.Roles[0].Containers = 0 }, "roles[0].containers", "at least 1"},
		{"total wrong", func(s *Spec) { s.Containers = 5 }, "containers", "the roles have 3 ranks"},
		{"priority shared", func(s *Spec) { s.Roles[1].Priority = 1 }, "roles[1].priority", "one priority per role"},
		{"no command", func(s *Spec) { s.Roles[1].Command = nil }, "roles[1].command", "nothing to run"},
		{"no memory", func(s *Spec) { s.Roles[0].Resource = s.Roles[0].Resource[1:] }, "roles[0].resource", "memory-mb missing"},
		{"unknown dependency", func(s *Spec) { s.Roles[1].DependsOn = []string{"ps"} }, "roles[1].dependsOn[0]", `"ps" is not another role`},
		{"self dependency", func(s *Spec) { s.Roles[1].DependsOn = []string{"worker"} }, "roles[1].dependsOn[0]", "not another role"},
		{"cycle", func(s *Spec) { s.Roles[0].DependsOn = []string{"worker"} }, "roles", "coordinator -> worker -> coordinator"},
		{"framework", func(s *Spec) { s.Roles[1].Framework = "jax" }, "roles[1].framework", `"jax"`},
		{"spread rack", func(s *Spec) { s.Roles[1].Placement.Spread = "rack" }, "roles[1].placement.spread", `"rack": node`},
		{"spread and pack", func(s *Spec) { s.Roles[1].Placement.Pack = "node" }, "roles[1].placement", "give one"},
		{"bad fallback", func(s *Spec) { s.Roles[1].Placement.Fallback = "retry" }, "roles[1].placement.fallback", `"retry": am, relax or fail`},
		{"relative rack", func(s *Spec) { s.Roles[1].Placement.Racks = []string{"/a", "b"} }, "roles[1].placement.racks[1]", `"b" does not start with /`},
		{"racks with nodes", func(s *Spec) { s.Roles[1].Placement.Racks, s.Roles[1].Placement.Nodes = []string{"/a"}, []string{"h"} }, "roles[1].placement.racks", "give nodes or racks"},
		{"above the hard bound", func(s *Spec) { s.Roles[1].Containers = MaxContainers; s.Containers = MaxContainers + 1 }, "roles[1].containers", "hard bound"},
		{"negative gang timeout", func(s *Spec) { s.GangTimeoutMillis = -1 }, "gangTimeoutMillis", "negative"},
		{"command NUL", func(s *Spec) { s.Roles[0].Command = []string{"a\x00"} }, "roles[0].command[0]", "NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := rolesSpec()
			tt.mut(s)
			err := s.Validate()
			var se *Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.field, se.Field)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestDependencyCycle(t *testing.T) {
	r := func(name string, deps ...string) Role { return Role{Name: name, DependsOn: deps} }
	assert.Nil(t, DependencyCycle([]Role{r("a"), r("b", "a"), r("c", "a", "b")}))
	assert.Equal(t, []string{"b", "c", "d", "b"}, DependencyCycle([]Role{r("a", "b"), r("b", "c"), r("c", "d"), r("d", "b")}))
	assert.Nil(t, DependencyCycle([]Role{r("a", "unknown")}))
}
