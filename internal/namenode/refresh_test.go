package namenode_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/internal/ipc/gss"
	"github.com/yarn-er/yarn-er/internal/namenode"
	"github.com/yarn-er/yarn-er/internal/namenode/namenodetest"
	"github.com/yarn-er/yarn-er/internal/testsupport/krb5test"
	"github.com/yarn-er/yarn-er/records"
)

func TestRenewDelegationToken(t *testing.T) {
	creds := krb5test.New(t, "nn/localhost")
	nn := kerberizedNameNode(t, creds, namenodetest.Options{RenewInterval: time.Hour})
	cfg := namenode.Config{Addrs: []string{nn.Addr},
		Kerberos: &gss.Kerberos{Client: creds.Client(t), ServicePrincipal: "nn/_HOST@" + krb5test.Realm, LookupAddr: krb5test.LookupLocalhost}}
	tok := records.Token{Identifier: []byte("ident"), Password: []byte("pw"), Kind: namenode.KindDelegationToken}
	before := time.Now()
	exp, err := namenode.RenewDelegationToken(context.Background(), cfg, tok)
	require.NoError(t, err)
	assert.WithinRange(t, exp, before.Add(time.Hour-time.Second), time.Now().Add(time.Hour+time.Second))
	assert.Equal(t, [][]byte{[]byte("ident")}, nn.Renewed())

	_, err = namenode.RenewDelegationToken(context.Background(), namenode.Config{Addrs: []string{nn.Addr}, Token: &tok}, tok)
	assert.ErrorContains(t, err, "needs a Kerberos login", "a token cannot renew itself")
}

// TestXAttrs: user attributes set and read back over a token connection, a missing one is no
// error, a missing path is os.ErrNotExist, and a value over the NameNode's limit is refused
// before it is sent.
func TestXAttrs(t *testing.T) {
	tok := records.Token{Identifier: []byte("id"), Password: []byte("pw"), Kind: namenode.KindDelegationToken}
	nn := namenodetest.New(t, namenodetest.Options{Paths: []string{"/staging/app_1"}})
	nn.AddToken(tok.Identifier, tok.Password)
	c, err := namenode.Dial(context.Background(), namenode.Config{Addrs: []string{nn.Addr}, Token: &tok})
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()

	_, ok, err := c.GetXAttr(ctx, "/staging/app_1", "yarn-er.credentials")
	require.NoError(t, err)
	assert.False(t, ok, "not set yet")

	require.NoError(t, c.SetXAttr(ctx, "/staging/app_1", "yarn-er.credentials", []byte("v1")))
	require.NoError(t, c.SetXAttr(ctx, "/staging/app_1", "yarn-er.credentials", []byte("v2")), "replaced")
	v, ok, err := c.GetXAttr(ctx, "/staging/app_1", "yarn-er.credentials")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, []byte("v2"), v)

	_, _, err = c.GetXAttr(ctx, "/staging/app_2", "yarn-er.credentials")
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.ErrorContains(t, c.SetXAttr(ctx, "/staging/app_1", "big", make([]byte, namenode.MaxXAttrValue+1)), "more than")
	assert.ErrorContains(t, c.SetXAttr(ctx, "relative", "x", nil), "not an absolute path")
}

// TestTokenFunc: each new connection authenticates with the token TokenFunc gives then, so a
// process whose token was replaced reconnects with the new one.
func TestTokenFunc(t *testing.T) {
	old := records.Token{Identifier: []byte("old"), Password: []byte("pw1"), Kind: namenode.KindDelegationToken}
	fresh := records.Token{Identifier: []byte("new"), Password: []byte("pw2"), Kind: namenode.KindDelegationToken}
	nn := namenodetest.New(t, namenodetest.Options{Paths: []string{"/d"}})
	nn.AddToken(fresh.Identifier, fresh.Password) // the NameNode knows only the new one
	var mu sync.Mutex
	current := old
	cfg := namenode.Config{Addrs: []string{nn.Addr}, TokenFunc: func() (records.Token, error) {
		mu.Lock()
		defer mu.Unlock()
		return current, nil
	}}
	_, err := namenode.Dial(context.Background(), cfg)
	require.Error(t, err, "the old token is refused")
	mu.Lock()
	current = fresh
	mu.Unlock()
	c, err := namenode.Dial(context.Background(), cfg)
	require.NoError(t, err)
	require.NoError(t, c.Close())
}
