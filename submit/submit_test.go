package submit

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/am"
	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/internal/testsupport/tabletest"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/kerberos"
	"github.com/yarn-er/yarn-er/preflight"
	"github.com/yarn-er/yarn-er/profile"
	"github.com/yarn-er/yarn-er/records"
	"github.com/yarn-er/yarn-er/stage"
	"github.com/yarn-er/yarn-er/yarn"
	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

func TestContainerVector(t *testing.T) {
	types := profile.DefaultResourceTypes()
	for _, tc := range []struct {
		name string
		req  Request
		want string
		err  string
	}{
		{name: "defaults", req: Request{}, want: "<memory-mb:1024, vcores:1>"},
		{name: "gpus", req: Request{GPUs: 2, Memory: "4g", VCores: 4}, want: "<memory-mb:4096, vcores:4, yarn.io/gpu:2>"},
		{name: "gpus and fpgas", req: Request{GPUs: 1, FPGAs: 1, Memory: "128m"}, want: "<memory-mb:128, vcores:1, yarn.io/gpu:1, yarn.io/fpga:1>"},
		{name: "resource", req: Request{Resources: []string{"nvidia.com/gpu=1", "gpu=2"}}, want: "<memory-mb:1024, vcores:1, nvidia.com/gpu:1, yarn.io/gpu:2>"},
		{name: "memory as resource", req: Request{Resources: []string{"memory-mb=2Gi", "vcores=3"}}, want: "<memory-mb:2048, vcores:3>"},
		{name: "memory as resource without unit", req: Request{Resources: []string{"memory-mb=2048"}}, want: "<memory-mb:2048, vcores:1>"},
		{name: "memory without unit given twice", req: Request{Memory: "1g", Resources: []string{"memory-mb=2048"}}, err: "given by --memory already"},
		{name: "gpu twice", req: Request{GPUs: 1, Resources: []string{"yarn.io/gpu=2"}}, err: "yarn.io/gpu is given by --gpus already"},
		{name: "memory twice", req: Request{Memory: "1g", Resources: []string{"memory=2Gi"}}, err: "given by --memory already"},
		{name: "vcores twice as resource", req: Request{Resources: []string{"vcores=2", "vcores=4"}}, err: "--resource vcores=4: vcores is given by --resource vcores=2 already"},
		{name: "memory twice as resource", req: Request{Resources: []string{"memory-mb=2Gi", "memory=4Gi"}}, err: "memory-mb is given by --resource memory-mb=2Gi already"},
		{name: "bad resource", req: Request{Resources: []string{"gpu"}}, err: "want TYPE=AMOUNT[UNIT]"},
		{name: "bad name", req: Request{Resources: []string{"10gpu=1"}}, err: "not a valid resource name"},
		{name: "bad unit", req: Request{Resources: []string{"yarn.io/gpu=1 parsecs"}}, err: "--resource"},
		{name: "fraction of a unit", req: Request{Resources: []string{"yarn.io/gpu=1m"}}, err: "less than 1"},
		{name: "negative gpus", req: Request{GPUs: -1}, err: "--gpus"},
		{name: "bad memory", req: Request{Memory: "lots"}, err: "--memory"},
		{name: "zero memory", req: Request{Memory: "0"}, err: "more than 0"},
		{name: "negative vcores", req: Request{VCores: -2}, err: "--vcores"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.req.Container(types)
			if tabletest.WantErr(t, err, tc.err, ErrRequest) {
				return
			}
			assert.Equal(t, tc.want, v.String())
		})
	}
}

func TestContainerFromFlink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "flink-conf.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`taskmanager.memory.process.size: 4g
taskmanager.numberOfTaskSlots: 2
external-resources: gpu
external-resource.gpu.amount: 2
external-resource.gpu.yarn.config-key: yarn.io/gpu
external-resource.gpu.driver-factory.class: org.apache.flink.externalresource.gpu.GPUDriverFactory
`), 0o600))
	fc, err := conf.LoadFlink(conf.FlinkOptions{Path: path, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	v, err := (&Request{Flink: fc}).Container(nil)
	require.NoError(t, err)
	assert.Equal(t, "<memory-mb:4096, vcores:2, yarn.io/gpu:2>", v.String())
	assert.Equal(t, &jobspec.Devices{Kind: "gpu", Amount: 2}, devices(v))

	_, err = (&Request{Flink: fc, GPUs: 1}).Container(nil)
	require.ErrorIs(t, err, ErrRequest)
	assert.Contains(t, err.Error(), "drop --gpus")
}

func TestParseMemoryMB(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{"4096", 4096, ""}, {"4g", 4096, ""}, {"4G", 4096, ""}, {"4Gi", 4096, ""}, {"4GiB", 4096, ""}, {"4gb", 4096, ""},
		{"512m", 512, ""}, {"512 MiB", 512, ""}, {"2048k", 2, ""}, {"1t", 1 << 20, ""}, {" 64m ", 64, ""},
		{"1048576b", 1, ""},
		{"1000k", 0, "not a whole number of MiB"}, {"", 0, "want a size"}, {"g", 0, "want a size"},
		{"-1g", 0, "want a size"}, {"1.5g", 0, "unknown unit"}, {"4x", 0, "unknown unit"},
		{"99999999999999999999", 0, "too large"}, {"9223372036854775807t", 0, "too large"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseMemoryMB(tc.in)
			if tabletest.WantErr(t, err, tc.err) {
				return
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseResource(t *testing.T) {
	name, q, err := ParseResource("fpga=2")
	require.NoError(t, err)
	assert.Equal(t, "yarn.io/fpga", name)
	assert.Equal(t, records.Quantity{Value: 2}, q)
	name, q, err = ParseResource("example.com/bw = 10k")
	require.NoError(t, err)
	assert.Equal(t, "example.com/bw", name)
	assert.Equal(t, records.Quantity{Value: 10, Units: "k"}, q)
	_, _, err = ParseResource("=1")
	assert.Error(t, err)
}

func TestOutcome(t *testing.T) {
	assert.NoError(t, Outcome(&yarn.App{ID: "a", State: records.AppFinished, FinalStatus: records.FinalSucceeded}))
	failed := Outcome(&yarn.App{ID: "a", State: records.AppFinished, FinalStatus: records.FinalFailed, Diagnostics: "rank 2 failed"})
	assert.ErrorIs(t, failed, ErrAppFailed)
	assert.NotErrorIs(t, failed, ErrAppKilled)
	assert.Contains(t, failed.Error(), "rank 2 failed")
	killed := Outcome(&yarn.App{ID: "a", State: records.AppKilled, FinalStatus: records.FinalKilled})
	assert.ErrorIs(t, killed, ErrAppKilled)
	assert.NotErrorIs(t, killed, ErrAppFailed)
	assert.ErrorIs(t, Outcome(&yarn.App{ID: "a", State: records.AppFailed, FinalStatus: records.FinalFailed}), ErrAppFailed)
}

func TestFitsMaximum(t *testing.T) {
	maxCap := records.NewResources(16384, 40, records.Resource{Name: "yarn.io/gpu", Value: 4})
	var v records.Resources
	v.Set("memory-mb", records.Quantity{Value: 1024, Units: "Mi"})
	v.Set("vcores", records.Quantity{Value: 1})
	v.Set("yarn.io/gpu", records.Quantity{Value: 4})
	assert.NoError(t, fitsMaximum(v, maxCap))
	v.Set("yarn.io/gpu", records.Quantity{Value: 5})
	err := fitsMaximum(v, maxCap)
	require.ErrorIs(t, err, ErrRequest)
	assert.Contains(t, err.Error(), "above the ResourceManager's maximum allocation 4")
	v.Set("yarn.io/gpu", records.Quantity{Value: 1})
	v.Set("nvidia.com/gpu", records.Quantity{Value: 1})
	err = fitsMaximum(v, maxCap)
	require.ErrorIs(t, err, ErrRequest)
	assert.Contains(t, err.Error(), `does not know resource type "nvidia.com/gpu" (it knows memory-mb, vcores, yarn.io/gpu)`)
}

// newFakeRM is package yarnfake's fake RM answering info, nodes, scheduler, scheduler-overview
// and new-application from the captures of the good cluster (variant "") or the misconfigured
// one ("misconfigured/"), every other request with the RM's 404.
func newFakeRM(t *testing.T, variant string) *yarnfake.RM {
	opts := []yarnfake.Option{yarnfake.WithRoutesOnly()}
	if variant == "misconfigured/" {
		opts = append(opts, yarnfake.WithMisconfigured())
	}
	rm := yarnfake.New(t, opts...)
	for route, name := range map[string]string{
		"GET /ws/v1/cluster/info":                  "info.json",
		"GET /ws/v1/cluster/nodes":                 "nodes.json",
		"GET /ws/v1/cluster/scheduler":             "scheduler.json",
		"GET /ws/v1/cluster/scheduler-overview":    "scheduler-overview.json",
		"POST /ws/v1/cluster/apps/new-application": "new-application.json",
	} {
		require.NoError(t, rm.ReplyCapture(route, name))
	}
	return rm
}

func testHadoop(t *testing.T, extra map[string]string) *conf.HadoopConfig {
	hc := &conf.HadoopConfig{}
	src := conf.Source{File: "yarn-site.xml", Line: 1}
	hc.Set("yarn.resourcemanager.scheduler.address", "rm.example.com:8030", src)
	hc.Set("yarn.resource-types", "yarn.io/gpu,yarn.io/fpga", src)
	hc.Set("yarn.scheduler.capacity.resource-calculator", preflight.DominantCalculator, src)
	// Nothing listens on port 1: staging would fail loudly if it were reached.
	hc.Set("fs.defaultFS", "hdfs://127.0.0.1:1", src)
	for k, v := range extra {
		hc.Set(k, v, src)
	}
	return hc
}

func testClient(t *testing.T, rm *yarnfake.RM, hc *conf.HadoopConfig) *Client {
	yc, err := yarn.NewClient(yarn.Options{Addresses: []string{rm.URL()}, User: "alice",
		Retry: yarn.RetryPolicy{MaxAttempts: 1, FailoverTimeout: -1}, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	c, err := New(Options{YARN: yc, Hadoop: hc, Executable: func() (string, error) { return os.Args[0], nil },
		Stage: stage.Options{DialTimeout: 1}})
	require.NoError(t, err)
	return c
}

// localFile writes a small file name into dir and returns its path.
func localFile(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte("x"), 0o600))
	return p
}

// mkdir makes the directory name in dir and returns name.
func mkdir(t *testing.T, dir, name string) string {
	t.Helper()
	require.NoError(t, os.Mkdir(filepath.Join(dir, name), 0o755))
	return name
}

// Bad input is refused before an application id is used up or anything is staged.
func TestSubmitRefusals(t *testing.T) {
	tmp := t.TempDir()
	for _, tc := range []struct {
		name      string
		captures  string
		req       Request
		setup     func(rm *yarnfake.RM)
		hadoop    map[string]string
		want      error
		msg       string
		newAppHit int
		// failed is the preflight check that must have failed ("" for any).
		failed string
	}{
		{name: "misconfigured cluster", captures: "misconfigured/", req: Request{GPUs: 1, Command: []string{"true"}},
			want: ErrPreflight, msg: "containers will NOT get their yarn.io/gpu"},
		{name: "above the maximum", captures: "", req: Request{GPUs: 5, Command: []string{"true"}},
			want: ErrPreflight, msg: "fix the failures, or pass --force"},
		{name: "queue missing", captures: "", req: Request{GPUs: 1, Queue: "nope", Command: []string{"true"}},
			want: ErrPreflight},
		{name: "no command", captures: "", req: Request{GPUs: 1}, want: ErrRequest, msg: "no command"},
		// A new user's --containers 1000000000 passed the preflight (capacity only warned), was
		// submitted, and its AM died out of memory.
		{name: "count above the hard bound", captures: "", req: Request{GPUs: 1, Containers: 1000000000, Command: []string{"true"}},
			want: ErrRequest, msg: "--containers: 1000000000 is above yarn-er's hard bound of 100000 ranks per job"},
		{name: "count above the hard bound, forced", captures: "", req: Request{GPUs: 1, Containers: 100001, Force: true, Command: []string{"true"}},
			want: ErrRequest, msg: "ask for at most 100000"},
		{name: "gang beyond an empty cluster", captures: "", req: Request{Gang: true, Roles: []RoleRequest{{Name: "w", GPUs: 1, Containers: 5000, Command: []string{"true"}}}},
			want: ErrRequest, msg: "role w.count: gang job: 5000 containers <memory-mb:1024, vcores:1, yarn.io/gpu:1> wanted, but even an empty cluster holds only 8"},
		{name: "gang role beyond an empty cluster, with another role", captures: "", req: Request{Roles: []RoleRequest{
			{Name: "ps", Command: []string{"true"}}, {Name: "w", GPUs: 1, Containers: 9, Gang: true, Command: []string{"true"}}}},
			want: ErrRequest, msg: "role w.count: gang w:"},
		{name: "missing file", captures: "", req: Request{Command: []string{"true"}, Files: []stage.Item{{Local: filepath.Join(tmp, "nope"), Name: "nope"}}},
			want: ErrRequest, msg: "nope"},
		{name: "archive stored as another file's name", captures: "", req: Request{Command: []string{"true"},
			Files:    []stage.Item{{Local: localFile(t, tmp, "data.txt"), Name: "venv.tgz", Type: records.LocalFile}},
			Archives: []stage.Item{{Local: localFile(t, tmp, "env.tgz"), Name: "venv", Type: records.LocalArchive}}},
			want: ErrRequest, msg: `archive "venv" would be stored as "venv.tgz"`},
		{name: "env name the launch script cannot export", captures: "", req: Request{Command: []string{"true"}, Env: map[string]string{"A-B": "1"}},
			want: ErrRequest, msg: `--env: "A-B": a variable name is letters, digits and _`},
		{name: "env name with a space", captures: "", req: Request{Command: []string{"true"}, Env: map[string]string{"A B": "1"}},
			want: ErrRequest, msg: `--env: "A B"`},
		{name: "env name starting with a digit", captures: "", req: Request{Command: []string{"true"}, Env: map[string]string{"1A": "1"}},
			want: ErrRequest, msg: `--env: "1A"`},
		{name: "env set by the AM", captures: "", req: Request{Command: []string{"true"}, Env: map[string]string{"YARN_ER_RANK": "0"}},
			want: ErrRequest, msg: "YARN_ER_RANK is set in every container by yarn-er's ApplicationMaster"},
		{name: "env set by the NodeManager", captures: "", req: Request{Command: []string{"true"}, Env: map[string]string{"CONTAINER_ID": "x"}},
			want: ErrRequest, msg: "CONTAINER_ID is set in every container by the NodeManager"},
		{name: "env token file", captures: "", req: Request{Command: []string{"true"}, Env: map[string]string{"HADOOP_TOKEN_FILE_LOCATION": "/t"}},
			want: ErrRequest, msg: "HADOOP_TOKEN_FILE_LOCATION is set in every container by the NodeManager"},
		{name: "env value with a quote", captures: "", req: Request{Command: []string{"true"}, Env: map[string]string{"A": `x"y`}},
			want: ErrRequest, msg: "launch script would interpret"},
		{name: "env value with a backquote", captures: "", req: Request{Command: []string{"true"}, Env: map[string]string{"A": "`id`"}},
			want: ErrRequest, msg: "launch script would interpret"},
		{name: "env value with a backslash", captures: "", req: Request{Command: []string{"true"}, Env: map[string]string{"A": `a\`}},
			want: ErrRequest, msg: "launch script would interpret"},
		{name: "too many tags", captures: "", req: Request{Command: []string{"true"}, Tags: strings.Split("a,b,c,d,e,f,g,h,i,j,k", ",")},
			want: ErrRequest, msg: "--tags: 11 tags: YARN takes at most 10"},
		{name: "tag too long", captures: "", req: Request{Command: []string{"true"}, Tags: []string{strings.Repeat("t", 101)}},
			want: ErrRequest, msg: "has 101 characters: YARN takes at most 100"},
		{name: "tag not ASCII", captures: "", req: Request{Command: []string{"true"}, Tags: []string{"ünï"}},
			want: ErrRequest, msg: "printable ASCII only"},
		{name: "long tag not ASCII", captures: "", req: Request{Command: []string{"true"}, Tags: []string{strings.Repeat("ü", 60)}},
			want: ErrRequest, msg: "printable ASCII only"},
		{name: "tag with a newline", captures: "", req: Request{Command: []string{"true"}, Tags: []string{"a\nb"}},
			want: ErrRequest, msg: "printable ASCII only"},
		{name: "tag in upper case", captures: "", req: Request{Command: []string{"true"}, Tags: []string{"Team-A"}},
			want: ErrRequest, msg: `give "team-a"`},
		{name: "empty tag", captures: "", req: Request{Command: []string{"true"}, Tags: []string{"a", "", "b"}},
			want: ErrRequest, msg: "an empty tag"},
		{name: "tag twice", captures: "", req: Request{Command: []string{"true"}, Tags: []string{"a", "a"}},
			want: ErrRequest, msg: `"a" is given twice`},
		{name: "command not UTF-8", captures: "", req: Request{Command: []string{"echo", "a\xffb"}},
			want: ErrRequest, msg: `argument 1 of the command "a\xffb" is not valid UTF-8`},
		{name: "command with NUL", captures: "", req: Request{Command: []string{"echo", "a\x00b"}},
			want: ErrRequest, msg: "holds a NUL byte"},
		{name: "env value not UTF-8", captures: "", req: Request{Command: []string{"true"}, Env: map[string]string{"A": "\xfe"}},
			want: ErrRequest, msg: "--env: the value of A"},
		{name: "env value with NUL", captures: "", req: Request{Command: []string{"true"}, Env: map[string]string{"A": "a\x00"}},
			want: ErrRequest, msg: "holds a NUL byte"},
		{name: "name not UTF-8", captures: "", req: Request{Command: []string{"true"}, Name: "job\xff"},
			want: ErrRequest, msg: `--name: "job\xff" is not valid UTF-8`},
		{name: "node label not UTF-8", captures: "", req: Request{Command: []string{"true"}, NodeLabel: "\xff"},
			want: ErrRequest, msg: "--node-label"},
		{name: "queue not UTF-8", captures: "", req: Request{Command: []string{"true"}, Queue: "\xff"},
			want: ErrRequest, msg: "--queue"},
		{name: "AM memory above the maximum", captures: "", req: Request{Command: []string{"true"}, AMMemoryMB: 32768},
			want: ErrRequest, msg: "--am-memory: the ApplicationMaster's container asks for 32768Mi of memory-mb, above the ResourceManager's maximum allocation 16384Mi", newAppHit: 1},
		{name: "AM vcores above the maximum", captures: "", req: Request{Command: []string{"true"}, AMVCores: 64},
			want: ErrRequest, msg: "--am-vcores: the ApplicationMaster's container asks for 64 of vcores", newAppHit: 1},
		{name: "yarn-er binary a directory", captures: "", req: Request{Command: []string{"true"}, Binary: tmp},
			want: ErrRequest, msg: "--yarn-er-binary: " + tmp + ": not a regular file: give the yarn-er executable"},
		{name: "yarn-er binary in a path with #", captures: "", req: Request{Command: []string{"true"}, Force: true,
			Binary: localFile(t, filepath.Join(tmp, mkdir(t, tmp, "a#b")), "yarn-er")},
			want: stage.ErrUnreachable, msg: "127.0.0.1:1", newAppHit: 1},
		{name: "node label expression", captures: "", req: Request{Command: []string{"true"}, NodeLabel: "gpu && fast"},
			want: ErrRequest, msg: `--node-label: "gpu && fast": a node label is letters, digits, - and _`},
		{name: "node label with a space", captures: "", req: Request{Command: []string{"true"}, NodeLabel: " gpu"},
			want: ErrRequest, msg: "YARN takes one label"},
		{name: "node label starting with _", captures: "", req: Request{Command: []string{"true"}, NodeLabel: "_gpu"},
			want: ErrRequest, msg: "--node-label"},
		{name: "file named as the devices file", captures: "", req: Request{Command: []string{"true"},
			Files: []stage.Item{{Local: localFile(t, tmp, "mine.json"), Name: am.DeviceInfoFile, Type: records.LocalFile}}},
			want: ErrRequest, msg: `link name "yarn-er-devices.json" of ` + filepath.Join(tmp, "mine.json") + " is used by the devices file yarn-er exec writes"},
		{name: "command too long for bash -c", captures: "", req: Request{Command: []string{"python", "-c", strings.Repeat("print(1);", 14000)}},
			want: ErrRequest, msg: "more than the 122880 that fit in one argument of bash -c"},
		{name: "command too long once quoted", captures: "", req: Request{Command: []string{"sh", "-c", strings.Repeat("'", 40000)}},
			want: ErrRequest, msg: "put it in a script and ship it with --file"},
		{name: "no scheduler address", captures: "", req: Request{Command: []string{"true"}},
			hadoop: map[string]string{"yarn.resourcemanager.scheduler.address": "0.0.0.0:8030"}, want: conf.ErrNoRMAddress,
			msg: "set yarn.resourcemanager.hostname"},
		{name: "REST submission disabled", captures: "", req: Request{Command: []string{"true"}, Force: true},
			setup: func(rm *yarnfake.RM) {
				rm.Fault("POST /ws/v1/cluster/apps/new-application", yarnfake.Fault{Status: http.StatusForbidden,
					Body: `{"RemoteException":{"exception":"ForbiddenException","message":"App submission via REST is disabled.","javaClassName":"org.apache.hadoop.yarn.webapp.ForbiddenException"}}`})
			},
			want: yarn.ErrRESTSubmissionDisabled, msg: "yarn.webapp.enable-rest-app-submissions=true", newAppHit: 1},
		{name: "user refused", captures: "", req: Request{Command: []string{"true"}, Force: true},
			setup: func(rm *yarnfake.RM) {
				rm.Fault("POST /ws/v1/cluster/apps/new-application", yarnfake.Fault{Status: http.StatusUnauthorized,
					Body: `{"RemoteException":{"exception":"AuthorizationException","message":"Unable to obtain user name, user not authenticated","javaClassName":"org.apache.hadoop.security.authorize.AuthorizationException"}}`})
			},
			want: yarn.ErrUnauthorized, msg: "refused the user", newAppHit: 1},
		{name: "HDFS unreachable", captures: "", req: Request{Command: []string{"true"}, Force: true},
			want: stage.ErrUnreachable, msg: "127.0.0.1:1", newAppHit: 1},
		{name: "Kerberos without a login", captures: "", req: Request{Command: []string{"true"}, Force: true},
			// Neither the caller nor the REST client has a login: submit makes its own (the
			// default credential cache here), which fails before an application id is used.
			hadoop: map[string]string{"hadoop.security.authentication": "Kerberos"}, want: kerberos.ErrAuthentication,
			msg: "run kinit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rm := newFakeRM(t, tc.captures)
			if tc.setup != nil {
				tc.setup(rm)
			}
			c := testClient(t, rm, testHadoop(t, tc.hadoop))
			krb5 := filepath.Join(t.TempDir(), "krb5.conf")
			require.NoError(t, os.WriteFile(krb5, []byte("[libdefaults]\n default_realm = EXAMPLE.COM\n"), 0o600))
			c.opts.Getenv = func(k string) string {
				return map[string]string{"KRB5_CONFIG": krb5, "KRB5CCNAME": "FILE:" + krb5 + ".cc"}[k]
			}
			var phases []Phase
			_, err := c.Submit(context.Background(), tc.req, func(s Step) { phases = append(phases, s.Phase) })
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Equal(t, tc.newAppHit, rm.Count("POST /ws/v1/cluster/apps/new-application"), "application ids used up")
			assert.Zero(t, rm.Count("POST /ws/v1/cluster/apps"), "nothing submitted")
			assert.NotContains(t, phases, PhaseSubmitting)
			var pe *PreflightError
			if errors.As(err, &pe) {
				assert.False(t, pe.Report.OK)
				if tc.failed != "" {
					var msgs []string
					for _, ch := range pe.Report.Checks {
						if ch.ID == tc.failed && ch.Status == preflight.StatusFail {
							msgs = append(msgs, ch.Message)
						}
					}
					require.Len(t, msgs, 1, "%s fails", tc.failed)
					assert.Contains(t, msgs[0], "even an empty cluster holds only")
				}
			}
		})
	}
}

// TestSubmitNodeLabelPreflight: --node-label reaches the preflight, which looks only at the nodes
// of that partition (the captured cluster has no labelled node).
func TestSubmitNodeLabelPreflight(t *testing.T) {
	rm := newFakeRM(t, "")
	c := testClient(t, rm, testHadoop(t, nil))
	_, err := c.Submit(context.Background(), Request{GPUs: 1, NodeLabel: "gpu", Command: []string{"true"}}, nil)
	require.ErrorIs(t, err, ErrPreflight)
	var pe *PreflightError
	require.ErrorAs(t, err, &pe)
	failing := map[string]string{}
	for _, ch := range pe.Report.Checks {
		if ch.Status == preflight.StatusFail {
			failing[ch.ID] = ch.Message
		}
	}
	assert.Contains(t, failing[preflight.IDNodeLabel], "--node-label = gpu: no RUNNING node carries the label")
	assert.Contains(t, failing[preflight.IDNoNodeFits], "--node-label = gpu: no RUNNING node carries the label")
	assert.Zero(t, rm.Count("POST /ws/v1/cluster/apps/new-application"), "application ids used up")

	// Without the label the same request passes the preflight (and fails later, at staging).
	_, err = c.Submit(context.Background(), Request{GPUs: 1, Command: []string{"true"}, Force: false}, nil)
	assert.NotErrorIs(t, err, ErrPreflight)
}

// TestSubmitWarnsOfCappedSettings: --max-attempts and --priority reach the preflight, whose
// warnings about the ResourceManager's caps (the captured /conf: yarn.resourcemanager.am.max-attempts
// and yarn.cluster.max-application-priority at Hadoop's defaults, 2 and 0) come as steps, fix
// included, and do not stop the submission (it goes on, and fails later at staging).
func TestSubmitWarnsOfCappedSettings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		req      Request
		warnings []string
	}{
		{name: "both capped", req: Request{Command: []string{"true"}, MaxAttempts: 3, Priority: new(int32(5))},
			warnings: []string{
				"preflight warning: cluster.max-attempts: --max-attempts 3, above the ResourceManager's cap yarn.resourcemanager.am.max-attempts = 2 (yarn-default.xml: Hadoop's default): the ResourceManager silently uses 2 instead, so the ApplicationMaster gets at most 2 attempts (fix: ask for at most 2 (--max-attempts 2), or raise yarn.resourcemanager.am.max-attempts in yarn-site.xml on the ResourceManager and restart it)",
				"preflight warning: cluster.priority: --priority 5, above the cluster's highest application priority yarn.cluster.max-application-priority = 0 (yarn-default.xml: Hadoop's default): the CapacityScheduler silently uses priority 0 instead (fix: ask for at most 0 (--priority 0), or raise yarn.cluster.max-application-priority in yarn-site.xml on the ResourceManager and restart it)",
			}},
		{name: "within the caps", req: Request{Command: []string{"true"}, MaxAttempts: 2, Priority: new(int32(0))}},
		{name: "the defaults", req: Request{Command: []string{"true"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rm := newFakeRM(t, "")
			require.NoError(t, rm.ReplyCapture("GET /conf", "conf.json"))
			c := testClient(t, rm, testHadoop(t, nil))
			var warnings []string
			_, err := c.Submit(context.Background(), tc.req, func(s Step) {
				if strings.HasPrefix(s.Message, "preflight warning: ") {
					warnings = append(warnings, s.Message)
				}
			})
			// Past the preflight: the application id is used up, HDFS (nothing listens) refuses.
			require.ErrorIs(t, err, stage.ErrUnreachable)
			assert.Equal(t, 1, rm.Count("POST /ws/v1/cluster/apps/new-application"))
			assert.Equal(t, 1, rm.Count("GET /conf"), "the preflight read the ResourceManager's configuration")
			assert.Equal(t, tc.warnings, warnings)
		})
	}
}

func TestAMContext(t *testing.T) {
	prio := int32(3)
	spec := &jobspec.Spec{Name: "yarn-er: train", Binary: jobspec.LocalFile{Name: "yarn-er", URL: "hdfs://nn/b", Size: 10, MtimeMillis: 5, Type: "FILE", Visibility: "APPLICATION"}}
	sc := amContext(Request{Queue: "gpu", Tags: []string{"team-a"}, Priority: &prio, MaxAttempts: 1, AMMemoryMB: 512},
		"application_1_0001", spec, jobspec.LocalFile{Name: jobspec.FileName, URL: "hdfs://nn/s", Size: 3, MtimeMillis: 6, Type: "FILE", Visibility: "APPLICATION"}, nil)
	b, err := json.Marshal(sc)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, "YARN-ER", got["application-type"])
	assert.Equal(t, "gpu", got["queue"])
	assert.Equal(t, map[string]any{"memory": 512.0, "vCores": 1.0}, got["resource"])
	assert.Equal(t, map[string]any{"tag": []any{"team-a"}}, got["application-tags"])
	assert.Equal(t, 60000.0, got["attempt-failures-validity-interval"], "AM failures count within a minute by default")
	for d, want := range map[time.Duration]int64{time.Hour: 3600000, -time.Second: -1, time.Microsecond: 1} {
		sc := amContext(Request{AttemptFailuresValidity: d}, "application_1_0001", spec, jobspec.LocalFile{Name: jobspec.FileName}, nil)
		assert.Equal(t, want, sc.AttemptFailuresValidityInterval, d)
	}
	am := got["am-container-spec"].(map[string]any)
	assert.Equal(t, map[string]any{"command": []any{"./yarn-er am 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr"}}, am["commands"])
	lr := am["local-resources"].(map[string]any)["entry"].([]any)
	require.Len(t, lr, 2)
	assert.Equal(t, "yarn-er", lr[0].(map[string]any)["key"])
	assert.Equal(t, map[string]any{"resource": "hdfs://nn/b", "type": "FILE", "visibility": "APPLICATION", "size": 10.0, "timestamp": 5.0}, lr[0].(map[string]any)["value"])
	assert.Equal(t, jobspec.FileName, lr[1].(map[string]any)["key"])

	// With the small AM binary staged, the AM container runs it and needs no yarn-er binary.
	amBin := jobspec.LocalFile{Name: AMBinaryName, URL: "hdfs://nn/a", Size: 7, MtimeMillis: 8, Type: "FILE", Visibility: "APPLICATION"}
	sc = amContext(Request{}, "application_1_0001", spec, jobspec.LocalFile{Name: jobspec.FileName, URL: "hdfs://nn/s", Size: 3, MtimeMillis: 6, Type: "FILE", Visibility: "APPLICATION"}, &amBin)
	assert.Equal(t, []string{"./yarn-er-am am 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr"}, sc.AMContainerSpec.Commands)
	assert.Equal(t, amBin.Resource(), sc.AMContainerSpec.LocalResources[AMBinaryName])
	assert.NotContains(t, sc.AMContainerSpec.LocalResources, jobspec.BinaryName)
	assert.Contains(t, sc.AMContainerSpec.LocalResources, jobspec.FileName)
}

// What YARN passes on as given is accepted: the variables the NodeManager fills in only when the
// container does not set them (CLASSPATH, HADOOP_*, JAVA_HOME, PATH), LD_PRELOAD, YARN's own {{VAR}}.
func TestCheckEnvAccepts(t *testing.T) {
	for k, v := range map[string]string{
		"CUDA_VISIBLE_DEVICES": "0", "_x1": "", "CLASSPATH": "./*:lib/a.jar", "HADOOP_CONF_DIR": "/etc/hadoop",
		"JAVA_HOME": "/opt/jdk", "PATH": "{{PWD}}/bin:/usr/bin", "LD_PRELOAD": "/opt/x.so", "MODE": "a b 'c' ü\nnext",
		"YARN_ER_VENDOR": "amd", "LD_LIBRARY_PATH": "$PWD/lib:$LD_LIBRARY_PATH", "DATA": "${HOME}/data",
	} {
		assert.NoError(t, checkEnv(k, v), "%s=%q", k, v)
	}
}

// The default name is cut at 200 bytes, before a rune rather than inside one.
func TestAppNameCut(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command []string
		want    string
	}{
		{"short", []string{"python", "train.py"}, "yarn-er: python train.py"},
		{"ascii", []string{strings.Repeat("a", 300)}, "yarn-er: " + strings.Repeat("a", 191) + "…"},
		{"two-byte runes", []string{strings.Repeat("ä", 150)}, "yarn-er: " + strings.Repeat("ä", 95) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := (&Request{Command: tc.command}).appName()
			assert.True(t, utf8.ValidString(got), "%q", got)
			assert.Equal(t, tc.want, got)
			assert.LessOrEqual(t, len(got), 200+len("…"))
		})
	}
}

// commandBytes is the length of the words am.Command writes into the launch script.
func TestCommandBytes(t *testing.T) {
	for _, cmd := range [][]string{
		{"true"}, {"python", "train.py", "--epochs", "3"}, {"sh", "-c", "echo 'it''s' \"$HOME\" `id` \\ done"},
		{"", "a b", "ü", "'", "$$", "100%", "a=b"}, {strings.Repeat("x'$", 1000)},
	} {
		words := am.Command(&jobspec.Spec{Command: cmd})
		words = words[:len(words)-2] // the log redirections
		assert.Equal(t, len(strings.Join(words, " ")), commandBytes(cmd), "%q", cmd)
	}
}

// TestSubmitPlacementPreflight: a role's placement reaches cluster.placement. On the captured
// cluster (placement-constraints.handler disabled) spread with fallback fail is refused before
// anything is staged; with the default fallback the preflight only warns.
func TestSubmitPlacementPreflight(t *testing.T) {
	rm := newFakeRM(t, "")
	c := testClient(t, rm, testHadoop(t, nil))
	role := func(fallback string) Request {
		return Request{Roles: []RoleRequest{{Name: "worker", Containers: 2, GPUs: 1, Command: []string{"true"},
			Placement: &jobspec.Placement{Spread: "node", Fallback: fallback}}}}
	}
	_, err := c.Submit(context.Background(), role(jobspec.FallbackFail), nil)
	require.ErrorIs(t, err, ErrPreflight)
	var pe *PreflightError
	require.ErrorAs(t, err, &pe)
	var got []preflight.Check
	for _, ch := range pe.Report.Checks {
		if ch.ID == preflight.IDPlacement {
			got = append(got, ch)
		}
	}
	require.Len(t, got, 1)
	assert.Equal(t, preflight.StatusFail, got[0].Status)
	assert.Contains(t, got[0].Message, "placement spread: node cannot be placed by the ResourceManager (yarn.resourcemanager.placement-constraints.handler is disabled")
	assert.Zero(t, rm.Count("POST /ws/v1/cluster/apps/new-application"), "nothing staged")

	var warnings []string
	_, err = c.Submit(context.Background(), role(""), func(s Step) {
		if strings.Contains(s.Message, "preflight warning") {
			warnings = append(warnings, s.Message)
		}
	})
	assert.NotErrorIs(t, err, ErrPreflight)
	require.NotEmpty(t, warnings)
	assert.Contains(t, strings.Join(warnings, "\n"), "role worker: cluster.placement: placement spread: node cannot be placed by the ResourceManager")
}
