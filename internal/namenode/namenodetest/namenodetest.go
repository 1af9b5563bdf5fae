// Package namenodetest is a fake HDFS NameNode for tests of code that asks one for delegation
// tokens or removes paths through package namenode (and of colinmarc/hdfs connections): a Hadoop
// IPC server on 127.0.0.1 (ipctest: SASL with tokens, Kerberos or SIMPLE) answering
// ClientNamenodeProtocol's getDelegationToken, cancelDelegationToken and delete from a small model
// of the namespace, as a 3.x NameNode answers them. It records what it was asked. It is for tests
// only; the integration tests use the real NameNode of the mini-YARN.
package namenodetest

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/hdfspb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/ipc/ipctest"
	"github.com/yarn-er/yarn-er/internal/namenode"
	"github.com/yarn-er/yarn-er/records"
)

// The Java exceptions the fake answers with.
const (
	ExStandby       = "org.apache.hadoop.ipc.StandbyException"
	ExNotEmpty      = "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException"
	ExAccessControl = "org.apache.hadoop.security.AccessControlException"
)

// Options configure a NameNode.
type Options struct {
	// Paths exist from the start: a path holds every path below it, so "/a/b" makes "/a" a
	// non-empty directory.
	Paths []string
	// Denied are paths whose delete is refused with AccessControlException.
	Denied []string
	// Standby answers every call with StandbyException, as the standby of an HA pair.
	Standby bool
	// Insecure answers getDelegationToken without a token, as a NameNode with security off.
	Insecure bool
	// Token is the delegation token getDelegationToken issues (zero: identifier "ident",
	// password "pw", kind HDFS_DELEGATION_TOKEN, no service).
	Token records.Token
}

// Delete is one delete request.
type Delete struct {
	Path      string
	Recursive bool
}

// NameNode is the fake. Its Server's settings (Simple, Kerberos, AddToken) choose how clients
// authenticate.
type NameNode struct {
	*ipctest.Server

	opts      Options
	mu        sync.Mutex
	paths     map[string]bool
	renewers  []string
	cancelled [][]byte
	deletes   []Delete
}

// New starts a fake NameNode; t.Cleanup stops it.
func New(t testing.TB, opts Options) *NameNode {
	t.Helper()
	if opts.Token.Identifier == nil {
		opts.Token = records.Token{Identifier: []byte("ident"), Password: []byte("pw"), Kind: namenode.KindDelegationToken}
	}
	nn := &NameNode{opts: opts, paths: map[string]bool{}}
	for _, p := range opts.Paths {
		nn.paths[p] = true
	}
	nn.Server = ipctest.NewServer(t, ipctest.NewProtocol(namenode.Protocol, &nn.mu,
		ipctest.Answer("getDelegationToken", nn.getDelegationToken),
		ipctest.Answer("cancelDelegationToken", nn.cancelDelegationToken),
		ipctest.Answer("delete", nn.delete),
	).Handle)
	return nn
}

func (nn *NameNode) standby() error {
	if nn.opts.Standby {
		return &ipctest.Exception{Class: ExStandby, Message: "Operation category WRITE is not supported in state standby"}
	}
	return nil
}

func (nn *NameNode) getDelegationToken(req *commonpb.GetDelegationTokenRequestProto) (proto.Message, error) {
	if err := nn.standby(); err != nil {
		return nil, err
	}
	nn.renewers = append(nn.renewers, req.GetRenewer())
	if nn.opts.Insecure {
		return &commonpb.GetDelegationTokenResponseProto{}, nil
	}
	t := nn.opts.Token
	return &commonpb.GetDelegationTokenResponseProto{Token: &commonpb.TokenProto{
		Identifier: t.Identifier, Password: t.Password, Kind: proto.String(t.Kind), Service: proto.String(t.Service),
	}}, nil
}

func (nn *NameNode) cancelDelegationToken(req *commonpb.CancelDelegationTokenRequestProto) (proto.Message, error) {
	if err := nn.standby(); err != nil {
		return nil, err
	}
	nn.cancelled = append(nn.cancelled, bytes.Clone(req.GetToken().GetIdentifier()))
	return &commonpb.CancelDelegationTokenResponseProto{}, nil
}

// delete removes a path and what is below it: false when it does not exist, an error for a
// non-empty directory without recursive and for a denied path.
func (nn *NameNode) delete(req *hdfspb.DeleteRequestProto) (proto.Message, error) {
	if err := nn.standby(); err != nil {
		return nil, err
	}
	src := req.GetSrc()
	nn.deletes = append(nn.deletes, Delete{Path: src, Recursive: req.GetRecursive()})
	if slices.Contains(nn.opts.Denied, src) {
		return nil, &ipctest.Exception{Class: ExAccessControl, Message: "Permission denied: access=WRITE, inode=\"" + src + "\""}
	}
	below := nn.below(src)
	if len(below) > 0 && !req.GetRecursive() {
		return nil, &ipctest.Exception{Class: ExNotEmpty, Message: "`" + src + " is non empty': Directory is not empty"}
	}
	found := nn.paths[src] || len(below) > 0
	delete(nn.paths, src)
	for _, p := range below {
		delete(nn.paths, p)
	}
	return &hdfspb.DeleteResponseProto{Result: proto.Bool(found)}, nil
}

// below returns the paths under dir (mu held).
func (nn *NameNode) below(dir string) []string {
	var out []string
	prefix := strings.TrimSuffix(dir, "/") + "/"
	for p := range nn.paths {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	return out
}

// Renewers are the renewers getDelegationToken was asked for, in order.
func (nn *NameNode) Renewers() []string {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	return slices.Clone(nn.renewers)
}

// Cancelled are the identifiers of the tokens cancelled, in order.
func (nn *NameNode) Cancelled() [][]byte {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	return slices.Clone(nn.cancelled)
}

// Deletes are the delete requests, in order.
func (nn *NameNode) Deletes() []Delete {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	return slices.Clone(nn.deletes)
}

// Exists reports whether path exists now (itself, or something below it).
func (nn *NameNode) Exists(path string) bool {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	return nn.paths[path] || len(nn.below(path)) > 0
}
