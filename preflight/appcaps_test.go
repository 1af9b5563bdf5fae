package preflight

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/yarn/yarnfake"
)

// confBody renders the RM's /conf?format=json with the given properties from yarn-site.xml, in
// Hadoop 3.5's shape.
func confBody(t testing.TB, props map[string]string) []byte {
	t.Helper()
	type prop struct {
		Key      string `json:"key"`
		Value    string `json:"value"`
		IsFinal  bool   `json:"isFinal"`
		Resource string `json:"resource"`
	}
	out := struct {
		Properties []prop `json:"properties"`
	}{Properties: []prop{}}
	for k, v := range props {
		out.Properties = append(out.Properties, prop{Key: k, Value: v, Resource: "yarn-site.xml"})
	}
	b, err := json.Marshal(out)
	require.NoError(t, err)
	return b
}

// capsRM is the good cluster's fake RM whose /conf has props only (nil: the captured /conf of
// Hadoop 3.5.0, every default included).
func capsRM(t testing.TB, props map[string]string) *yarnfake.RM {
	t.Helper()
	bodies := goodCaptures(t)
	if props != nil {
		bodies["/conf"] = confBody(t, props)
	}
	return newFakeRM(t, bodies)
}

func prio(n int32) *int32 { return &n }

// capCase is one case of the cap checks: the /conf properties, what the container given directly
// asks for, and the entry expected.
type capCase struct {
	name     string
	props    map[string]string // nil: the captured /conf
	attempts int32
	priority *int32
	status   Status
	parts    []string // in the message
	fix      string   // in the fix ("" : no fix)
}

func runCapCases(t *testing.T, id string, cases []capCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rm := capsRM(t, tc.props)
			rep := run(t, Input{Container: vector("memory-mb", 1024, "vcores", 1), Client: rmClient(t, rm.URL()),
				MaxAttempts: tc.attempts, Priority: tc.priority})
			e := requireOne(t, rep, id, tc.status, tc.parts...)
			if tc.fix == "" {
				assert.Empty(t, e.Fix)
			} else {
				assert.Contains(t, e.Fix, tc.fix)
			}
			if tc.status != StatusSkip {
				assert.Equal(t, rm.URL()+"/conf", e.Source)
			}
			// A warning never fails the submission.
			assert.True(t, rep.OK, "failing: %v", rep.failing())
		})
	}
}

func TestMaxAttemptsCheck(t *testing.T) {
	const rmKey, globalKey = "yarn.resourcemanager.am.max-attempts", "yarn.resourcemanager.am.global.max-attempts"
	runCapCases(t, IDMaxAttempts, []capCase{
		{name: "captured defaults, within", attempts: 2, status: StatusPass,
			parts: []string{"--max-attempts 2: within the ResourceManager's cap yarn.resourcemanager.am.max-attempts = 2 (yarn-default.xml: Hadoop's default)"}},
		{name: "captured defaults, above", attempts: 5, status: StatusWarn,
			parts: []string{"--max-attempts 5, above the ResourceManager's cap yarn.resourcemanager.am.max-attempts = 2 (yarn-default.xml: Hadoop's default)",
				"the ResourceManager silently uses 2 instead, so the ApplicationMaster gets at most 2 attempts"},
			fix: "ask for at most 2 (--max-attempts 2), or raise yarn.resourcemanager.am.max-attempts in yarn-site.xml on the ResourceManager and restart it"},
		{name: "key absent: Hadoop's default 2", props: map[string]string{}, attempts: 3, status: StatusWarn,
			parts: []string{"yarn.resourcemanager.am.max-attempts = 2 (not in the ResourceManager's /conf: Hadoop's default)"}, fix: "ask for at most 2"},
		{name: "key absent, within", props: map[string]string{}, attempts: 1, status: StatusPass,
			parts: []string{"--max-attempts 1: within", "= 2 (not in the ResourceManager's /conf: Hadoop's default)"}},
		{name: "raised", props: map[string]string{rmKey: "4"}, attempts: 4, status: StatusPass,
			parts: []string{"yarn.resourcemanager.am.max-attempts = 4 (yarn-site.xml)"}},
		{name: "raised, above", props: map[string]string{rmKey: "4"}, attempts: 5, status: StatusWarn,
			parts: []string{"silently uses 4 instead"}, fix: "ask for at most 4 (--max-attempts 4)"},
		{name: "lowered to 1", props: map[string]string{rmKey: "1"}, attempts: 2, status: StatusWarn,
			parts: []string{"cap yarn.resourcemanager.am.max-attempts = 1 (yarn-site.xml)", "gets at most 1 attempt: a failed ApplicationMaster is not started again"}, fix: "ask for at most 1"},
		{name: "hexadecimal and blanks, as Configuration.getInt reads them", props: map[string]string{rmKey: " 0x4 "}, attempts: 4, status: StatusPass,
			parts: []string{"= 4 (yarn-site.xml)"}},
		{name: "global cap above the default", props: map[string]string{rmKey: "2", globalKey: "10"}, attempts: 5, status: StatusPass,
			parts: []string{"within the ResourceManager's cap yarn.resourcemanager.am.global.max-attempts = 10 (yarn-site.xml)"}},
		{name: "global cap exceeded", props: map[string]string{rmKey: "2", globalKey: "10"}, attempts: 11, status: StatusWarn,
			parts: []string{"above the ResourceManager's cap yarn.resourcemanager.am.global.max-attempts = 10", "silently uses 10 instead"},
			fix:   "raise yarn.resourcemanager.am.global.max-attempts in yarn-site.xml"},
		{name: "global cap below the default", props: map[string]string{rmKey: "3", globalKey: "1"}, attempts: 2, status: StatusWarn,
			parts: []string{"global.max-attempts = 1"}, fix: "ask for at most 1"},
		{name: "blank global cap: yarn.resourcemanager.am.max-attempts", props: map[string]string{rmKey: "3", globalKey: " "}, attempts: 4, status: StatusWarn,
			parts: []string{"cap yarn.resourcemanager.am.max-attempts = 3"}, fix: "ask for at most 3 (--max-attempts 3)"},
		{name: "none asked for", attempts: 0, status: StatusPass,
			parts: []string{"no ApplicationMaster attempts asked for: the ResourceManager gives 2 (yarn.resourcemanager.am.max-attempts = 2 (yarn-default.xml: Hadoop's default))"}},
		{name: "below 1", props: map[string]string{rmKey: "3"}, attempts: -1, status: StatusWarn,
			parts: []string{"--max-attempts -1: the ResourceManager takes fewer than 1 ApplicationMaster attempt as none asked for and silently uses yarn.resourcemanager.am.max-attempts = 3 (yarn-site.xml) instead"},
			fix:   "ask for 1 to 3 attempts (--max-attempts 1 for one)"},
		{name: "not a number", props: map[string]string{rmKey: "abc"}, attempts: 3, status: StatusSkip,
			parts: []string{"cannot tell the ResourceManager's cap of ApplicationMaster attempts", `yarn.resourcemanager.am.max-attempts = "abc" (from yarn-site.xml): not an int`}},
		{name: "global not a number", props: map[string]string{globalKey: "ten"}, attempts: 3, status: StatusSkip,
			parts: []string{`yarn.resourcemanager.am.global.max-attempts = "ten"`}},
		{name: "beyond an int", props: map[string]string{rmKey: "2147483648"}, attempts: 3, status: StatusSkip,
			parts: []string{"not an int"}},
		{name: "zero", props: map[string]string{rmKey: "0"}, attempts: 3, status: StatusSkip,
			parts: []string{"yarn.resourcemanager.am.max-attempts = 0 (yarn-site.xml): not a positive number"}},
	})
}

func TestPriorityCheck(t *testing.T) {
	const key = "yarn.cluster.max-application-priority"
	runCapCases(t, IDPriority, []capCase{
		{name: "captured default, above", priority: prio(5), status: StatusWarn,
			parts: []string{"--priority 5, above the cluster's highest application priority yarn.cluster.max-application-priority = 0 (yarn-default.xml: Hadoop's default): the CapacityScheduler silently uses priority 0 instead"},
			fix:   "ask for at most 0 (--priority 0), or raise yarn.cluster.max-application-priority in yarn-site.xml on the ResourceManager and restart it"},
		{name: "captured default, 0", priority: prio(0), status: StatusPass,
			parts: []string{"--priority 0: within the cluster's highest application priority yarn.cluster.max-application-priority = 0 (yarn-default.xml: Hadoop's default)"}},
		{name: "negative is kept", priority: prio(-3), status: StatusPass, parts: []string{"--priority -3: within"}},
		{name: "none asked for", status: StatusPass, parts: []string{"no --priority: the application gets the queue's default priority"}},
		{name: "key absent: Hadoop's default 0", props: map[string]string{}, priority: prio(1), status: StatusWarn,
			parts: []string{"yarn.cluster.max-application-priority = 0 (not in the ResourceManager's /conf: Hadoop's default)", "silently uses priority 0"},
			fix:   "ask for at most 0"},
		{name: "raised", props: map[string]string{key: "10"}, priority: prio(10), status: StatusPass,
			parts: []string{"= 10 (yarn-site.xml)"}},
		{name: "raised, above", props: map[string]string{key: "10"}, priority: prio(11), status: StatusWarn,
			parts: []string{"--priority 11, above", "= 10 (yarn-site.xml)", "silently uses priority 10"}, fix: "ask for at most 10 (--priority 10)"},
		{name: "hexadecimal", props: map[string]string{key: "0x0A"}, priority: prio(10), status: StatusPass, parts: []string{"= 10 (yarn-site.xml)"}},
		{name: "not a number", props: map[string]string{key: "abc"}, priority: prio(5), status: StatusSkip,
			parts: []string{"cannot tell the cluster's highest application priority", `yarn.cluster.max-application-priority = "abc" (from yarn-site.xml): not an int`}},
		{name: "not a number, none asked for", props: map[string]string{key: "abc"}, status: StatusPass, parts: []string{"no --priority"}},
	})
}

// The FairScheduler and the FifoScheduler give every application priority 0, whatever the key.
func TestPriorityOtherSchedulers(t *testing.T) {
	fair := []byte(`{"scheduler":{"schedulerInfo":{"type":"fairScheduler","rootQueue":{"queueName":"root","childQueues":{"queue":[
		{"type":"fairSchedulerLeafQueueInfo","queueName":"root.default","maxResources":{"memory":16384,"vCores":32}}]}}}}}`)
	fifo := []byte(`{"scheduler":{"schedulerInfo":{"type":"fifoScheduler","capacity":1.0,"usedCapacity":0.0,"qstate":"RUNNING"}}}`)
	for _, tc := range []struct {
		name, kind string
		body       []byte
	}{{"fair", "FairScheduler", fair}, {"fifo", "FifoScheduler", fifo}} {
		t.Run(tc.name, func(t *testing.T) {
			bodies := goodCaptures(t)
			bodies["/ws/v1/cluster/scheduler"] = tc.body
			bodies["/conf"] = confBody(t, map[string]string{keyMaxAppPriority: "10"})
			rm := newFakeRM(t, bodies)
			in := Input{Container: vector("memory-mb", 1024, "vcores", 1), Client: rmClient(t, rm.URL()), Priority: prio(5)}
			e := requireOne(t, run(t, in), IDPriority, StatusWarn,
				"--priority 5: the "+tc.kind+" (from /ws/v1/cluster/scheduler) does not support application priorities and silently gives every application priority 0 instead")
			assert.Contains(t, e.Fix, "leave the priority out")
			assert.Contains(t, e.Fix, "--priority 0")
			in.Priority = prio(0)
			requireOne(t, run(t, in), IDPriority, StatusPass, "--priority 0: the "+tc.kind+" gives every application priority 0")
		})
	}

	// The scheduler unread, /conf names a class yarn-er does not know: cannot tell.
	bodies := goodCaptures(t)
	delete(bodies, "/ws/v1/cluster/scheduler")
	bodies["/conf"] = confBody(t, map[string]string{keySchedulerClass: "com.example.OwnScheduler"})
	rm := newFakeRM(t, bodies)
	rep := run(t, Input{Container: vector("memory-mb", 1024, "vcores", 1), Client: rmClient(t, rm.URL()), Priority: prio(5)})
	requireOne(t, rep, IDPriority, StatusSkip, "yarn.resourcemanager.scheduler.class = com.example.OwnScheduler is not a scheduler yarn-er knows")
	// The same class without the scheduler's answer, and FairScheduler: from /conf.
	bodies["/conf"] = confBody(t, map[string]string{keySchedulerClass: "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler"})
	rm = newFakeRM(t, bodies)
	rep = run(t, Input{Container: vector("memory-mb", 1024, "vcores", 1), Client: rmClient(t, rm.URL()), Priority: prio(5)})
	requireOne(t, rep, IDPriority, StatusWarn, "the FairScheduler (from yarn.resourcemanager.scheduler.class = org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler)")
}

// Without /conf the checks skip with the reason; the priority falls back to the scheduler
// overview (Hadoop 3.4+), which reports the scheduler's own value.
func TestCapChecksWithoutConf(t *testing.T) {
	in := func(rm *yarnfake.RM) Input {
		return Input{Container: vector("memory-mb", 1024, "vcores", 1), Client: rmClient(t, rm.URL()), MaxAttempts: 3, Priority: prio(5)}
	}
	bodies := goodCaptures(t)
	delete(bodies, "/conf")
	rm := newFakeRM(t, bodies)
	rm.Fault("GET /conf", yarnfake.Fault{Status: http.StatusForbidden,
		Body: `{"RemoteException":{"exception":"ForbiddenException","message":"only admins","javaClassName":"org.apache.hadoop.yarn.webapp.ForbiddenException"}}`})
	rep := run(t, in(rm))
	requireOne(t, rep, IDMaxAttempts, StatusSkip, "cannot read the ResourceManager's /conf (for yarn.resourcemanager.am.max-attempts)", "403")
	requireOne(t, rep, IDPriority, StatusSkip, "cannot tell the cluster's highest application priority", "cannot read the ResourceManager's /conf (for yarn.cluster.max-application-priority)")

	bodies = withOverview(t)
	delete(bodies, "/conf")
	rm = newFakeRM(t, bodies)
	rep = run(t, in(rm))
	requireOne(t, rep, IDMaxAttempts, StatusSkip, "cannot read the ResourceManager's /conf", "404")
	e := requireOne(t, rep, IDPriority, StatusWarn, "--priority 5, above the cluster's highest application priority yarn.cluster.max-application-priority = 0 (the scheduler's value in /ws/v1/cluster/scheduler-overview)")
	assert.Contains(t, e.Fix, "ask for at most 0 (--priority 0)")
}

func TestCapChecksSkipWithoutRM(t *testing.T) {
	rep := run(t, Input{Container: vector("memory-mb", 1024, "vcores", 1), MaxAttempts: 3, Priority: prio(5), NoClientReason: "no ResourceManager known: test"})
	for _, id := range []string{IDMaxAttempts, IDPriority} {
		requireOne(t, rep, id, StatusSkip, "no ResourceManager known: test")
	}
	rep = run(t, Input{Container: vector("memory-mb", 1024, "vcores", 1), MaxAttempts: 3, Priority: prio(5)})
	requireOne(t, rep, IDMaxAttempts, StatusSkip, "no ResourceManager known: give --rm URL")

	rm := capsRM(t, nil)
	rm.Fault("GET /ws/v1/cluster/info", yarnfake.Fault{Status: http.StatusServiceUnavailable})
	rep = run(t, Input{Container: vector("memory-mb", 1024, "vcores", 1), Client: rmClient(t, rm.URL()), MaxAttempts: 3, Priority: prio(5)})
	for _, id := range []string{IDMaxAttempts, IDPriority} {
		requireOne(t, rep, id, StatusSkip, "the ResourceManager is not reachable (see cluster.reachable)")
	}
}

// With a Flink configuration the checks read what Flink's YarnClusterDescriptor sends:
// yarn.application-attempts (unset: 1, or 2 with high availability) and yarn.application.priority
// (sent only when 0 or more).
func TestCapChecksFlink(t *testing.T) {
	const rmKey = "yarn.resourcemanager.am.max-attempts"
	for _, tc := range []struct {
		name      string
		overrides []string
		props     map[string]string // nil: the captured /conf
		id        string
		status    Status
		parts     []string
		fix       string
		source    string // "" : the RM's /conf
	}{
		{name: "attempts unset, no HA", id: IDMaxAttempts, status: StatusPass,
			parts: []string{"yarn.application-attempts is not set and high availability is off, so Flink asks for 1 attempt: within the ResourceManager's cap yarn.resourcemanager.am.max-attempts = 2 (yarn-default.xml: Hadoop's default)"}},
		{name: "attempts above the cap", overrides: []string{"yarn.application-attempts=5"}, id: IDMaxAttempts, status: StatusWarn,
			parts:  []string{"yarn.application-attempts = 5, above the ResourceManager's cap yarn.resourcemanager.am.max-attempts = 2 (yarn-default.xml: Hadoop's default)", "silently uses 2 instead"},
			fix:    "ask for at most 2 (yarn.application-attempts: 2), or raise yarn.resourcemanager.am.max-attempts",
			source: "-D yarn.application-attempts"},
		{name: "attempts within a raised cap", overrides: []string{"yarn.application-attempts=5"}, props: map[string]string{rmKey: "8"}, id: IDMaxAttempts, status: StatusPass,
			parts: []string{"yarn.application-attempts = 5: within", "= 8 (yarn-site.xml)"}, source: "-D yarn.application-attempts"},
		{name: "attempts 0", overrides: []string{"yarn.application-attempts=0"}, id: IDMaxAttempts, status: StatusWarn,
			parts: []string{"yarn.application-attempts = 0: the ResourceManager takes fewer than 1 ApplicationMaster attempt as none asked for and silently uses yarn.resourcemanager.am.max-attempts = 2 (yarn-default.xml: Hadoop's default) instead"},
			fix:   "yarn.application-attempts: 1 for one", source: "-D yarn.application-attempts"},
		{name: "HA default 2 above a cap of 1", overrides: []string{"high-availability.type=zookeeper"}, props: map[string]string{rmKey: "1"}, id: IDMaxAttempts, status: StatusWarn,
			parts:  []string{"yarn.application-attempts is not set and high availability is on (high-availability.type = zookeeper), so Flink asks for 2 attempts, above the ResourceManager's cap yarn.resourcemanager.am.max-attempts = 1 (yarn-site.xml)"},
			fix:    "ask for at most 1 (yarn.application-attempts: 1)",
			source: "-D high-availability.type"},
		{name: "HA default 2 within the default cap", overrides: []string{"high-availability.type=KUBERNETES"}, id: IDMaxAttempts, status: StatusPass,
			parts: []string{"so Flink asks for 2 attempts: within", "= 2 (yarn-default.xml: Hadoop's default)"}, source: "-D high-availability.type"},
		{name: "HA through the deprecated key", overrides: []string{"high-availability=zookeeper"}, props: map[string]string{rmKey: "1"}, id: IDMaxAttempts, status: StatusWarn,
			parts: []string{"high availability is on (high-availability = zookeeper)"}, fix: "ask for at most 1", source: "-D high-availability"},
		{name: "HA through a factory class", overrides: []string{"high-availability.type=com.example.HaFactory"}, props: map[string]string{rmKey: "1"}, id: IDMaxAttempts, status: StatusWarn,
			parts: []string{"high availability is on (high-availability.type = com.example.HaFactory)"}, fix: "ask for at most 1", source: "-D high-availability.type"},
		{name: "HA off: NONE in any case", overrides: []string{"high-availability.type=none"}, props: map[string]string{rmKey: "1"}, id: IDMaxAttempts, status: StatusPass,
			parts: []string{"high availability is off, so Flink asks for 1 attempt"}},
		{name: "HA off: the old default standalone", overrides: []string{"recovery.mode=standalone"}, props: map[string]string{rmKey: "1"}, id: IDMaxAttempts, status: StatusPass,
			parts: []string{"high availability is off"}},
		{name: "the key wins over the deprecated ones", overrides: []string{"high-availability.type=NONE", "high-availability=zookeeper"}, props: map[string]string{rmKey: "1"}, id: IDMaxAttempts, status: StatusPass,
			parts: []string{"high availability is off"}},
		{name: "explicit attempts win over HA", overrides: []string{"high-availability.type=zookeeper", "yarn.application-attempts=1"}, props: map[string]string{rmKey: "1"}, id: IDMaxAttempts, status: StatusPass,
			parts: []string{"yarn.application-attempts = 1: within"}, source: "-D yarn.application-attempts"},
		{name: "priority unset", id: IDPriority, status: StatusPass,
			parts: []string{"yarn.application.priority is not set: the application gets the queue's default priority"}},
		{name: "priority -1: not sent", overrides: []string{"yarn.application.priority=-1"}, id: IDPriority, status: StatusPass,
			parts: []string{"yarn.application.priority = -1 (negative: Flink sets no priority): the application gets the queue's default priority"}, source: "-D yarn.application.priority"},
		{name: "priority above the cap", overrides: []string{"yarn.application.priority=5"}, id: IDPriority, status: StatusWarn,
			parts:  []string{"yarn.application.priority = 5, above the cluster's highest application priority yarn.cluster.max-application-priority = 0 (yarn-default.xml: Hadoop's default)"},
			fix:    "ask for at most 0 (yarn.application.priority: 0), or raise yarn.cluster.max-application-priority",
			source: "-D yarn.application.priority"},
		{name: "priority within a raised cap", overrides: []string{"yarn.application.priority=5"}, props: map[string]string{keyMaxAppPriority: "5"}, id: IDPriority, status: StatusPass,
			parts: []string{"yarn.application.priority = 5: within", "= 5 (yarn-site.xml)"}, source: "-D yarn.application.priority"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rm := capsRM(t, tc.props)
			rep := run(t, Input{Flink: flinkConf(t, goodFlink, tc.overrides...), Client: rmClient(t, rm.URL())})
			e := requireOne(t, rep, tc.id, tc.status, tc.parts...)
			if tc.fix == "" {
				assert.Empty(t, e.Fix)
			} else {
				assert.Contains(t, e.Fix, tc.fix)
			}
			want := tc.source
			if want == "" {
				want = rm.URL() + "/conf"
			}
			assert.Equal(t, want, e.Source)
		})
	}
}

// A value Flink's client cannot read fails the deployment: the check fails, with or without a
// ResourceManager.
func TestCapChecksFlinkValueInvalid(t *testing.T) {
	rm := capsRM(t, nil)
	for _, tc := range []struct{ key, id string }{{keyFlinkAttempts, IDMaxAttempts}, {keyFlinkPriority, IDPriority}} {
		for _, client := range []bool{true, false} {
			in := Input{Flink: flinkConf(t, goodFlink, tc.key+"=abc")}
			if client {
				in.Client = rmClient(t, rm.URL())
			}
			rep := run(t, in)
			e := requireOne(t, rep, tc.id, StatusFail, tc.key+" = abc: Flink's client cannot read it as an int (\"Could not parse value 'abc' for key '"+tc.key+"'.\")")
			assert.Equal(t, "-D "+tc.key, e.Source)
			assert.Equal(t, "set "+tc.key+" to a whole number, or remove it", e.Fix)
			assert.False(t, rep.OK)
		}
	}
}

func TestHadoopInt(t *testing.T) {
	for in, want := range map[string]int64{"2": 2, " 7\t": 7, "+3": 3, "-1": -1, "0x10": 16, "0X1f": 31, "-0x2": -2, "2147483647": 1<<31 - 1} {
		got, err := hadoopInt(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"abc", "", "1.5", "2147483648", "0x", "1_000", "0x80000000"} {
		_, err := hadoopInt(bad)
		assert.Error(t, err, bad)
	}
}
