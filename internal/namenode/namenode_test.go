package namenode_test

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/proto"
	"github.com/yarn-er/yarn-er/internal/ipc/gss"
	"github.com/yarn-er/yarn-er/internal/ipc/ipctest"
	"github.com/yarn-er/yarn-er/internal/krb5test"
	"github.com/yarn-er/yarn-er/internal/namenode"
	"github.com/yarn-er/yarn-er/records"
)

// fakeNameNode answers getDelegationToken with a token for the renewer, or a standby error.
func fakeNameNode(t *testing.T, creds *krb5test.Creds, standby bool, issued *[]string) *ipctest.Server {
	s := ipctest.NewServer(t, func(c *ipctest.Call) (proto.Message, error) {
		if standby {
			return nil, &ipctest.Exception{Class: "org.apache.hadoop.ipc.StandbyException", Message: "Operation category WRITE is not supported in state standby"}
		}
		switch c.Method {
		case "getDelegationToken":
			req := &commonpb.GetDelegationTokenRequestProto{}
			if err := c.Decode(req); err != nil {
				return nil, err
			}
			*issued = append(*issued, req.GetRenewer())
			if req.GetRenewer() == "nobody" {
				return &commonpb.GetDelegationTokenResponseProto{}, nil
			}
			return &commonpb.GetDelegationTokenResponseProto{Token: &commonpb.TokenProto{
				Identifier: []byte("ident"), Password: []byte("pw"), Kind: proto.String(namenode.KindDelegationToken), Service: proto.String(""),
			}}, nil
		case "cancelDelegationToken":
			req := &commonpb.CancelDelegationTokenRequestProto{}
			if err := c.Decode(req); err != nil {
				return nil, err
			}
			*issued = append(*issued, "cancel:"+string(req.GetToken().GetIdentifier()))
			return &commonpb.CancelDelegationTokenResponseProto{}, nil
		}
		return nil, &ipctest.Exception{Class: "org.apache.hadoop.ipc.RpcNoSuchMethodException", Message: c.Method}
	})
	s.Kerberos = &ipctest.Kerberos{Keytab: creds.Keytab, Principal: "nn/localhost"}
	return s
}

func TestGetDelegationToken(t *testing.T) {
	creds := krb5test.New(t, "nn/localhost")
	var issued []string
	standby := fakeNameNode(t, creds, true, &issued)
	active := fakeNameNode(t, creds, false, &issued)
	// A NameNode that is down, the standby, then the active one.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := ln.Addr().String()
	require.NoError(t, ln.Close())
	cfg := namenode.Config{
		Addrs:    []string{down, standby.Addr, active.Addr},
		Kerberos: &gss.Kerberos{Client: creds.Client(t), ServicePrincipal: "nn/_HOST@" + krb5test.Realm, LookupAddr: krb5test.LookupLocalhost},
		Service:  "ha-hdfs:mycluster",
	}
	tok, err := namenode.GetDelegationToken(context.Background(), cfg, "rm/localhost@"+krb5test.Realm)
	require.NoError(t, err)
	assert.Equal(t, records.Token{Identifier: []byte("ident"), Password: []byte("pw"), Kind: namenode.KindDelegationToken, Service: "ha-hdfs:mycluster"}, tok)
	assert.Equal(t, []string{"rm/localhost@" + krb5test.Realm}, issued)
	calls := active.MethodCalls("getDelegationToken")
	require.Len(t, calls, 1)
	assert.Equal(t, namenode.Protocol, calls[0].Protocol)
	assert.Equal(t, []string{krb5test.User + "@" + krb5test.Realm}, active.Principals())

	// Without a configured service, the token names the NameNode's ip:port as Hadoop does.
	cfg.Addrs, cfg.Service = []string{active.Addr}, ""
	tok, err = namenode.GetDelegationToken(context.Background(), cfg, "rm")
	require.NoError(t, err)
	assert.Equal(t, active.Addr, tok.Service)

	require.NoError(t, namenode.CancelDelegationToken(context.Background(), cfg, tok))
	assert.Equal(t, "cancel:ident", issued[len(issued)-1])

	_, err = namenode.GetDelegationToken(context.Background(), cfg, "nobody")
	assert.ErrorIs(t, err, namenode.ErrNoToken)
}

func TestGetDelegationTokenErrors(t *testing.T) {
	creds := krb5test.New(t, "nn/localhost")
	var issued []string
	standby := fakeNameNode(t, creds, true, &issued)
	krb := &gss.Kerberos{Client: creds.Client(t), ServicePrincipal: "nn/_HOST", LookupAddr: krb5test.LookupLocalhost}
	for _, tc := range []struct {
		name    string
		cfg     namenode.Config
		renewer string
		msg     string
	}{
		{"no renewer", namenode.Config{Addrs: []string{standby.Addr}, Kerberos: krb}, " ", "yarn.resourcemanager.principal"},
		{"no address", namenode.Config{Kerberos: krb}, "rm", "no NameNode address"},
		{"no Kerberos", namenode.Config{Addrs: []string{standby.Addr}}, "rm", "need a Kerberos login"},
		{"only standbys", namenode.Config{Addrs: []string{standby.Addr}, Kerberos: krb}, "rm", "no active NameNode answered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := namenode.GetDelegationToken(context.Background(), tc.cfg, tc.renewer)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	// None of them got a token issued.
	assert.Empty(t, issued)
}
