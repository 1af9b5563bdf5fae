// Package namenodetest is a fake HDFS NameNode for tests of code that asks one for delegation
// tokens or removes paths through package namenode (and of colinmarc/hdfs connections): a Hadoop
// IPC server on 127.0.0.1 (ipctest: SASL with tokens, Kerberos or SIMPLE) answering
// ClientNamenodeProtocol's getDelegationToken, cancelDelegationToken, renewDelegationToken, delete, setXAttr and getXAttrs from a small model
// of the namespace, as a 3.x NameNode answers them. It records what it was asked. It is for tests
// only; the integration tests use the real NameNode of the mini-YARN.
package namenodetest

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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
	ExFileNotFound  = "java.io.FileNotFoundException"
)

// Options configure a NameNode.
type Options struct {
	// Paths exist from the start: a path holds every path below it, so "/a/b" makes "/a" a
	// non-empty directory.
	Paths []string
	// Denied are paths whose delete is refused with AccessControlException.
	Denied []string
	// Standby answers every call with StandbyException, and refuses token logins with it, as the
	// standby of an HA pair does.
	Standby bool
	// Insecure answers getDelegationToken without a token, as a NameNode with security off.
	Insecure bool
	// Token is the delegation token getDelegationToken issues (zero: identifier "ident",
	// password "pw", kind HDFS_DELEGATION_TOKEN, no service).
	Token records.Token
	// Numbered gives every token issued its own identifier and password: Token's with "-N"
	// appended, N counting from 1.
	Numbered bool
	// RenewInterval is how far renewDelegationToken moves a token's expiry from now (default
	// 24 hours).
	RenewInterval time.Duration
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
	issued    int
	renewed   [][]byte
	xattrs    map[string][]byte // path + "\x00" + name → value
}

// New starts a fake NameNode; t.Cleanup stops it.
func New(t testing.TB, opts Options) *NameNode {
	t.Helper()
	if opts.Token.Identifier == nil {
		opts.Token = records.Token{Identifier: []byte("ident"), Password: []byte("pw"), Kind: namenode.KindDelegationToken}
	}
	if opts.RenewInterval <= 0 {
		opts.RenewInterval = 24 * time.Hour
	}
	nn := &NameNode{opts: opts, paths: map[string]bool{}, xattrs: map[string][]byte{}}
	for _, p := range opts.Paths {
		nn.paths[p] = true
	}
	nn.Server = ipctest.NewServer(t, ipctest.NewProtocol(namenode.Protocol, &nn.mu,
		ipctest.Answer("getDelegationToken", nn.getDelegationToken),
		ipctest.Answer("cancelDelegationToken", nn.cancelDelegationToken),
		ipctest.Answer("delete", nn.delete),
		ipctest.Answer("renewDelegationToken", nn.renewDelegationToken),
		ipctest.Answer("setXAttr", nn.setXAttr),
		ipctest.Answer("getXAttrs", nn.getXAttrs),
	).Handle)
	nn.Server.StandbyTokens = opts.Standby
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
	nn.issued++
	if nn.opts.Numbered {
		n := "-" + strconv.Itoa(nn.issued)
		t.Identifier = append(bytes.Clone(t.Identifier), n...)
		t.Password = append(bytes.Clone(t.Password), n...)
	}
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

func (nn *NameNode) renewDelegationToken(req *commonpb.RenewDelegationTokenRequestProto) (proto.Message, error) {
	if err := nn.standby(); err != nil {
		return nil, err
	}
	nn.renewed = append(nn.renewed, bytes.Clone(req.GetToken().GetIdentifier()))
	return &commonpb.RenewDelegationTokenResponseProto{NewExpiryTime: proto.Uint64(uint64(time.Now().Add(nn.opts.RenewInterval).UnixMilli()))}, nil
}

// setXAttr sets a user attribute of an existing path, as a NameNode does.
func (nn *NameNode) setXAttr(req *hdfspb.SetXAttrRequestProto) (proto.Message, error) {
	if err := nn.standby(); err != nil {
		return nil, err
	}
	src := req.GetSrc()
	if !nn.paths[src] && len(nn.below(src)) == 0 {
		return nil, &ipctest.Exception{Class: ExFileNotFound, Message: "File/Directory does not exist: " + src}
	}
	if req.GetXAttr().GetNamespace() != hdfspb.XAttrProto_USER {
		return nil, &ipctest.Exception{Class: ExAccessControl, Message: "User doesn't have permission for xattr"}
	}
	nn.xattrs[src+"\x00"+req.GetXAttr().GetName()] = bytes.Clone(req.GetXAttr().GetValue())
	return &hdfspb.SetXAttrResponseProto{}, nil
}

// getXAttrs answers for the named attributes, failing as a NameNode does when one is not set.
func (nn *NameNode) getXAttrs(req *hdfspb.GetXAttrsRequestProto) (proto.Message, error) {
	if err := nn.standby(); err != nil {
		return nil, err
	}
	src := req.GetSrc()
	if !nn.paths[src] && len(nn.below(src)) == 0 {
		return nil, &ipctest.Exception{Class: ExFileNotFound, Message: "File/Directory does not exist: " + src}
	}
	resp := &hdfspb.GetXAttrsResponseProto{}
	for _, x := range req.GetXAttrs() {
		v, ok := nn.xattrs[src+"\x00"+x.GetName()]
		if !ok || x.GetNamespace() != hdfspb.XAttrProto_USER {
			return nil, &ipctest.Exception{Class: "java.io.IOException", Message: "At least one of the attributes provided was not found."}
		}
		resp.XAttrs = append(resp.XAttrs, &hdfspb.XAttrProto{Namespace: hdfspb.XAttrProto_USER.Enum(), Name: proto.String(x.GetName()), Value: bytes.Clone(v)})
	}
	return resp, nil
}

// XAttr returns the value of the user attribute name of path, as set last.
func (nn *NameNode) XAttr(path, name string) ([]byte, bool) {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	v, ok := nn.xattrs[path+"\x00"+name]
	return bytes.Clone(v), ok
}

// Renewed are the identifiers of the tokens renewed, in order.
func (nn *NameNode) Renewed() [][]byte {
	nn.mu.Lock()
	defer nn.mu.Unlock()
	return slices.Clone(nn.renewed)
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
