package namenode_test

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/ipc/gss"
	"github.com/yarn-er/yarn-er/internal/ipc/ipctest"
	"github.com/yarn-er/yarn-er/internal/namenode"
	"github.com/yarn-er/yarn-er/internal/namenode/namenodetest"
	"github.com/yarn-er/yarn-er/internal/testsupport/krb5test"
	"github.com/yarn-er/yarn-er/records"
)

// kerberizedNameNode is a fake NameNode that authenticates clients with Kerberos as nn/localhost.
func kerberizedNameNode(t *testing.T, creds *krb5test.Creds, opts namenodetest.Options) *namenodetest.NameNode {
	nn := namenodetest.New(t, opts)
	nn.Kerberos = &ipctest.Kerberos{Keytab: creds.Keytab, Principal: "nn/localhost"}
	return nn
}

func TestGetDelegationToken(t *testing.T) {
	creds := krb5test.New(t, "nn/localhost")
	standby := kerberizedNameNode(t, creds, namenodetest.Options{Standby: true})
	active := kerberizedNameNode(t, creds, namenodetest.Options{})
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
	assert.Equal(t, []string{"rm/localhost@" + krb5test.Realm}, active.Renewers())
	assert.Empty(t, standby.Renewers(), "the standby issued nothing")
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
	assert.Equal(t, [][]byte{[]byte("ident")}, active.Cancelled())

	// A NameNode with security off answers without a token.
	cfg.Addrs = []string{kerberizedNameNode(t, creds, namenodetest.Options{Insecure: true}).Addr}
	_, err = namenode.GetDelegationToken(context.Background(), cfg, "rm")
	assert.ErrorIs(t, err, namenode.ErrNoToken)
}

func TestGetDelegationTokenErrors(t *testing.T) {
	creds := krb5test.New(t, "nn/localhost")
	standby := kerberizedNameNode(t, creds, namenodetest.Options{Standby: true})
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
	assert.Empty(t, standby.Renewers())
}

// TestProxyUserToken: with DoAs, the login asks for the token as the proxy user (the effective
// user of the connection context), and cancels it as that user; a NameNode that does not give
// the login proxy-user rights refuses with ErrProxyUserRefused and issues nothing.
func TestProxyUserToken(t *testing.T) {
	creds := krb5test.New(t, "nn/localhost")
	krb := &gss.Kerberos{Client: creds.Client(t), ServicePrincipal: "nn/_HOST", LookupAddr: krb5test.LookupLocalhost}
	allowed := kerberizedNameNode(t, creds, namenodetest.Options{})
	allowed.ProxyUsers = []string{krb5test.User + "@" + krb5test.Realm}
	cfg := namenode.Config{Addrs: []string{allowed.Addr}, Kerberos: krb, DoAs: "bob"}
	tok, err := namenode.GetDelegationToken(context.Background(), cfg, "rm")
	require.NoError(t, err)
	require.NoError(t, namenode.CancelDelegationToken(context.Background(), cfg, tok))
	for _, m := range []string{"getDelegationToken", "cancelDelegationToken"} {
		calls := allowed.MethodCalls(m)
		require.Len(t, calls, 1, m)
		assert.Equal(t, "bob", calls[0].User, "%s runs as the proxy user", m)
	}

	refused := kerberizedNameNode(t, creds, namenodetest.Options{})
	cfg.Addrs = []string{refused.Addr}
	_, err = namenode.GetDelegationToken(context.Background(), cfg, "rm")
	require.ErrorIs(t, err, namenode.ErrProxyUserRefused)
	assert.Contains(t, err.Error(), "is not allowed to impersonate bob")
	assert.Empty(t, refused.Renewers(), "no token issued")
	assert.Equal(t, 1, refused.Connections(), "a refusal is not asked again on new connections")

	// Under HA, the refusal is the answer too: the next NameNode is not asked.
	other := kerberizedNameNode(t, creds, namenodetest.Options{})
	cfg.Addrs = []string{refused.Addr, other.Addr}
	_, err = namenode.GetDelegationToken(context.Background(), cfg, "rm")
	require.ErrorIs(t, err, namenode.ErrProxyUserRefused)
	assert.Zero(t, other.Connections())
}
