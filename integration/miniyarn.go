//go:build integration

// Package integration holds yarn-er's tests against a real mini-YARN (Hadoop's own
// ResourceManager, NodeManagers and HDFS from docker/), behind the build tag "integration":
//
//	go test -tags integration -count=1 ./integration/...
//
// TestMain starts one cluster from docker/conf for the whole run, or reuses the one that
// $YARN_ER_MINIYARN_STATE names (see docker/README.md). This file has the harness-facing
// helpers: reading endpoints.json and driving docker/mini-yarn.
package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Endpoints is the content of a mini-YARN's endpoints.json, written by the harness once
// every daemon is up. Addresses are host:port on 127.0.0.1 unless they are URLs.
type Endpoints struct {
	// HadoopVersion is the version of the Hadoop jars the cluster runs, e.g. "3.5.0".
	HadoopVersion string `json:"hadoopVersion"`
	// RMWebAddress is the RM's web/REST base URL, e.g. "http://127.0.0.1:41234".
	RMWebAddress string `json:"rmWebAddress"`
	// RMWebAddresses are every RM's web base URL (one, or each of an HA cluster's, in the order
	// of HARMIDs).
	RMWebAddresses []string `json:"rmWebAddresses"`
	// HARMIDs is yarn.resourcemanager.ha.rm-ids of a cluster started with --ha ("rm0,rm1");
	// empty otherwise.
	HARMIDs string `json:"haRmIds"`
	// ZooKeeper is the host:port of the embedded ZooKeeper of a cluster started with --ha
	// (hadoop.zk.address: the RMs' leader election and state store); empty otherwise.
	ZooKeeper string `json:"zooKeeper"`
	// HAElectionLock is the znode of the RMs' leader election lock under --ha.
	HAElectionLock string `json:"haElectionLock"`
	// RMAddress is the ApplicationClientProtocol address (yarn.resourcemanager.address).
	RMAddress string `json:"rmAddress"`
	// RMSchedulerAddress is the ApplicationMasterProtocol address
	// (yarn.resourcemanager.scheduler.address).
	RMSchedulerAddress string `json:"rmSchedulerAddress"`
	// RMResourceTrackerAddress is yarn.resourcemanager.resource-tracker.address.
	RMResourceTrackerAddress string `json:"rmResourceTrackerAddress"`
	// RMAdminAddress is yarn.resourcemanager.admin.address.
	RMAdminAddress string `json:"rmAdminAddress"`
	// NodeManagers lists every NodeManager of the cluster.
	NodeManagers []NodeManager `json:"nodeManagers"`
	// HDFSURI is the NameNode's URI, e.g. "hdfs://127.0.0.1:40015" (also fs.defaultFS).
	HDFSURI string `json:"hdfsUri"`
	// NamenodeHTTPAddress is the NameNode's http web address (WebHDFS); empty when HDFS serves
	// https only (--https: dfs.http.policy=HTTPS_ONLY).
	NamenodeHTTPAddress string `json:"namenodeHttpAddress"`
	// NamenodeHTTPSAddress is the NameNode's https web address under --https, e.g.
	// "localhost:40213" (the name its certificate holds); empty otherwise.
	NamenodeHTTPSAddress string `json:"namenodeHttpsAddress"`
	// HDFSNameservice is the HA nameservice HDFSURI names (start --hdfs-ha); "" otherwise.
	HDFSNameservice string `json:"hdfsNameservice,omitempty"`
	// HDFSStandbyNameNode and HDFSActiveNameNode are the RPC addresses of its NameNodes (the
	// standby is the first of dfs.ha.namenodes).
	HDFSStandbyNameNode string `json:"hdfsStandbyNameNode,omitempty"`
	HDFSActiveNameNode  string `json:"hdfsActiveNameNode,omitempty"`
	// HadoopConfDir is the client configuration (core-site.xml, hdfs-site.xml,
	// yarn-site.xml, capacity-scheduler.xml, resource-types.xml, ...) with the real addresses.
	HadoopConfDir string `json:"hadoopConfDir"`
	// ConfSource is the conf dir the cluster was started from (docker/conf, ...).
	ConfSource string `json:"confSource"`
	// StateDir is the cluster's state dir.
	StateDir string `json:"stateDir"`
	// ClusterLog is the log of the cluster's JVM.
	ClusterLog string `json:"clusterLog"`
	// User is the user the cluster runs as; containers run as this user too. On a secure
	// cluster it is the Kerberos user's short name (alice), whose applications they are.
	User string `json:"user"`
	// Secure describes the KDC and the credentials of a cluster started with --kerberos; nil
	// otherwise.
	Secure *SecureEndpoints `json:"secure"`
	// ResourceTypes are the resource types the RM knows, memory-mb and vcores included.
	ResourceTypes []string `json:"resourceTypes"`
	// ClusterResource is the total resource of all NodeManagers by type, at start-up.
	ClusterResource map[string]int64 `json:"clusterResource"`
	// PID is the process id of the cluster's JVM.
	PID int `json:"pid"`
	// StartedAt is when the JVM started (RFC 3339).
	StartedAt string `json:"startedAt"`
	// HDFSStartMillis, YARNStartMillis and ReadyMillis time the start-up inside the JVM.
	HDFSStartMillis int64 `json:"hdfsStartMillis"`
	// YARNStartMillis is the time the YARN daemons took to start.
	YARNStartMillis int64 `json:"yarnStartMillis"`
	// ReadyMillis is the time from JVM start-up to ready, HDFS and YARN together.
	ReadyMillis int64 `json:"readyMillis"`
}

// NodeManager is one NodeManager of a mini-YARN.
type NodeManager struct {
	// ID is the node id as YARN reports it (/ws/v1/cluster/nodes "id"), e.g. "localhost:39121".
	ID string `json:"id"`
	// Address is the ContainerManagementProtocol address to dial, e.g. "127.0.0.1:39121".
	Address string `json:"address"`
	// HTTPAddress is the NodeManager's web address, e.g. "127.0.0.1:34819"; empty when the
	// NodeManagers serve no web API (Hadoop 3.4 and older, docs/hadoop-versions.md).
	HTTPAddress string `json:"httpAddress"`
	// GPUs is the number of NVIDIA GPUs in the NodeManager's fake GPU host: as many as it
	// advertises as yarn.io/gpu.
	GPUs int `json:"gpus"`
	// FPGAs is the number of Intel FPGAs (DFL) in the same tree: as many as it advertises as
	// yarn.io/fpga.
	FPGAs int `json:"fpgas"`
	// GPUHostRoot is the NodeManager's fake GPU host tree, the YARN_ER_HOST_ROOT its containers
	// get from it (docker/README.md, "Fake GPU hosts").
	GPUHostRoot string `json:"gpuHostRoot"`
	// CoordinationFile is the YARN_ER_COORDINATION_FILE its containers get from it.
	CoordinationFile string `json:"coordinationFile"`
	// IsolatesGPUs is true for the NodeManager of `docker/mini-yarn start --isolate-node N`: each
	// of its containers can open only the GPUs it was given.
	IsolatesGPUs bool `json:"isolatesGpus"`
}

// Port is the port of the NodeManager's id, the NM_PORT of its containers.
func (n NodeManager) Port() string { return n.ID[strings.LastIndexByte(n.ID, ':')+1:] }

// Jersey1 reports whether the cluster's RM serves its REST API with Jersey 1 (Hadoop 3.4 and
// older; 3.5 moved to Jersey 2): a few error messages and JSON shapes differ
// (docs/hadoop-versions.md).
func (e *Endpoints) Jersey1() bool { return !e.HadoopAtLeast(3, 5) }

// HadoopAtLeast reports whether the cluster runs Hadoop major.minor or newer.
func (e *Endpoints) HadoopAtLeast(major, minor int) bool {
	var a, b int
	if _, err := fmt.Sscanf(e.HadoopVersion, "%d.%d", &a, &b); err != nil {
		return false
	}
	return a > major || (a == major && b >= minor)
}

// RMURL returns the RM URL for path (e.g. "/ws/v1/cluster/info") with the cluster's user
// as user.name, which the mini-YARN requires (anonymous requests get 401), plus query.
func (e *Endpoints) RMURL(path string, query url.Values) string {
	q := url.Values{}
	for k, v := range query {
		q[k] = append([]string(nil), v...)
	}
	if q.Get("user.name") == "" {
		q.Set("user.name", e.User)
	}
	return strings.TrimRight(e.RMWebAddress, "/") + path + "?" + q.Encode()
}

// SecureEndpoints are the secure mode's fields of endpoints.json.
type SecureEndpoints struct {
	// Realm is the MiniKdc's realm, EXAMPLE.COM.
	Realm string `json:"realm"`
	// KDC is the KDC's host:port.
	KDC string `json:"kdc"`
	// Krb5Conf is the krb5.conf of the realm.
	Krb5Conf string `json:"krb5Conf"`
	// Principal and Keytab are the user yarn-er logs in as (alice@REALM, proxy-user rights).
	Principal string `json:"principal"`
	Keytab    string `json:"keytab"`
	// OtherPrincipal and OtherKeytab are a second user without proxy-user rights (bob@REALM).
	OtherPrincipal string `json:"otherPrincipal"`
	OtherKeytab    string `json:"otherKeytab"`
	// ServicePrincipal is the daemons' principal (hadoop/localhost@REALM).
	ServicePrincipal string `json:"servicePrincipal"`
	// RPCProtection is hadoop.rpc.protection (and dfs.data.transfer.protection).
	RPCProtection string `json:"rpcProtection"`
	// TLSCA is the CA certificate (PEM) of the web endpoints with --https, else "".
	TLSCA string `json:"tlsCa"`
}

// LoadEndpoints reads stateDir/endpoints.json.
func LoadEndpoints(stateDir string) (*Endpoints, error) {
	path := filepath.Join(stateDir, "endpoints.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mini-YARN endpoints: %w", err)
	}
	var e Endpoints
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("mini-YARN endpoints %s: %w", path, err)
	}
	if e.RMWebAddress == "" || e.HadoopConfDir == "" {
		return nil, fmt.Errorf("mini-YARN endpoints %s: rmWebAddress or hadoopConfDir missing", path)
	}
	return &e, nil
}

// RepoRoot returns the root of the yarn-er checkout: the nearest directory above the
// working directory whose go.mod declares github.com/yarn-er/yarn-er.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/yarn-er/yarn-er\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("yarn-er checkout not found above the working directory")
		}
		dir = parent
	}
}

// MiniYARN is a mini-YARN that a test run started or reuses.
type MiniYARN struct {
	// StateDir is the cluster's state dir.
	StateDir string
	// Endpoints are the cluster's addresses.
	Endpoints *Endpoints
	// Owned is true when this process started the cluster and must stop it.
	Owned bool

	script string
	log    io.Writer
}

// Script returns the path of docker/mini-yarn in this checkout.
func Script() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "docker", "mini-yarn"), nil
}

// Running reports whether stateDir holds a ready, live mini-YARN
// (docker/mini-yarn status exits 0).
func Running(ctx context.Context, stateDir string) bool {
	script, err := Script()
	if err != nil {
		return false
	}
	cmd := exec.CommandContext(ctx, script, "status", "--state", stateDir)
	return cmd.Run() == nil
}

// Reuse returns the running mini-YARN of stateDir, which the caller must not stop.
func Reuse(ctx context.Context, stateDir string) (*MiniYARN, error) {
	if !Running(ctx, stateDir) {
		return nil, fmt.Errorf("no running mini-YARN at %s", stateDir)
	}
	e, err := LoadEndpoints(stateDir)
	if err != nil {
		return nil, err
	}
	return &MiniYARN{StateDir: stateDir, Endpoints: e}, nil
}

// Start starts a mini-YARN from confDir (e.g. docker/conf) in stateDir with docker/mini-yarn
// and waits until it is ready, with the start command's flags (e.g. "--recovery"). The cluster
// stops by itself when this process ends, even if Stop is never called. The script's progress
// and errors go to log.
func Start(ctx context.Context, confDir, stateDir string, log io.Writer, flags ...string) (*MiniYARN, error) {
	script, err := Script()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = io.Discard
	}
	cmd := exec.CommandContext(ctx, script, append([]string{"start", "--conf", confDir, "--state", stateDir,
		"--watch-pid", fmt.Sprint(os.Getpid())}, flags...)...)
	cmd.Stdout = log
	cmd.Stderr = log
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("docker/mini-yarn start --conf %s --state %s: %w", confDir, stateDir, err)
	}
	e, err := LoadEndpoints(stateDir)
	if err != nil {
		return nil, err
	}
	return &MiniYARN{StateDir: stateDir, Endpoints: e, Owned: true, script: script, log: log}, nil
}

// Stop stops the cluster if this process started it; a reused cluster is left running.
func (m *MiniYARN) Stop(ctx context.Context) error {
	if m == nil || !m.Owned {
		return nil
	}
	cmd := exec.CommandContext(ctx, m.script, "stop", "--state", m.StateDir)
	cmd.Stdout = m.log
	cmd.Stderr = m.log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("docker/mini-yarn stop --state %s: %w", m.StateDir, err)
	}
	return nil
}

// Fault runs a fault verb of docker/mini-yarn on the cluster of stateDir (stop-nm, start-nm with
// args "--node", "N"; kill-am with the application id) and returns what the script printed: what
// it did and how long the cluster took to be whole again.
func Fault(ctx context.Context, stateDir, verb string, args ...string) (string, error) {
	script, err := Script()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, script, append(append([]string{verb}, args...), "--state", stateDir)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("docker/mini-yarn %s %s --state %s: %w: %s", verb, strings.Join(args, " "), stateDir, err, out.String())
	}
	return strings.TrimSpace(out.String()), nil
}
