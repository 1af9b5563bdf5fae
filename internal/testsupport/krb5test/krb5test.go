// Package krb5test plays a Kerberos KDC's part for unit tests, without a KDC: it mints a TGT and
// service tickets for a test user with gokrb5, writes them into an MIT credential cache file (the
// file kinit and kvno would leave) beside a krb5.conf whose KDC is unreachable, and hands out the
// service keytab, so that a test server can verify what the client sends with gokrb5's acceptor.
package krb5test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	krb5client "github.com/jcmturner/gokrb5/v8/client"
	krb5config "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
)

// Realm is the test realm; User the test user's name in it.
const (
	Realm = "YARN-ER.TEST"
	User  = "alice"
)

// Creds are the files and keys of one test login.
type Creds struct {
	// CCache is the credential cache path: a TGT and one ticket per service.
	CCache string
	// Krb5Conf is the krb5.conf path (default_realm Realm, KDC 127.0.0.1:1, unreachable).
	Krb5Conf string
	// Keytab holds the services' keys (and the TGS key), for acceptors.
	Keytab *keytab.Keytab
}

// New mints tickets for User@Realm to each service principal (service/host, without realm).
func New(t testing.TB, services ...string) *Creds {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("krb5test: %v", err)
		}
	}
	kt := keytab.New()
	now := time.Now().UTC()
	must(kt.AddEntry("krbtgt/"+Realm, Realm, "kdc-secret", now, 1, etypeID.AES256_CTS_HMAC_SHA1_96))
	for _, s := range services {
		must(kt.AddEntry(s, Realm, "secret-of-"+s, now, 1, etypeID.AES256_CTS_HMAC_SHA1_96))
	}
	client := types.NewPrincipalName(nametype.KRB_NT_PRINCIPAL, User)
	start, end := now.Add(-time.Minute), now.Add(time.Hour)
	var w ccacheWriter
	w.Write([]byte{5, 4})
	w.u16(0) // no header fields
	w.principal(client)
	for _, s := range append([]string{"krbtgt/" + Realm}, services...) {
		name := types.NewPrincipalName(nametype.KRB_NT_SRV_INST, s)
		tkt, key, err := messages.NewTicket(client, Realm, name, Realm, types.NewKrbFlags(), kt,
			etypeID.AES256_CTS_HMAC_SHA1_96, 1, start, start, end, end)
		must(err)
		must(w.credential(client, name, tkt, key, start, end))
	}
	dir := t.TempDir()
	c := &Creds{CCache: filepath.Join(dir, "krb5cc_test"), Krb5Conf: filepath.Join(dir, "krb5.conf"), Keytab: kt}
	must(os.WriteFile(c.CCache, w.Bytes(), 0o600))
	cfg := "[libdefaults]\n default_realm = " + Realm + "\n dns_lookup_kdc = false\n" +
		"[realms]\n " + Realm + " = {\n  kdc = 127.0.0.1:1\n }\n"
	must(os.WriteFile(c.Krb5Conf, []byte(cfg), 0o600))
	return c
}

// LookupLocalhost is a reverse lookup in which 127.0.0.1 is named localhost and nothing else has
// a name: tests dial 127.0.0.1 and serve principals of host localhost.
func LookupLocalhost(_ context.Context, addr string) ([]string, error) {
	if addr == "127.0.0.1" {
		return []string{"localhost."}, nil
	}
	return nil, errors.New("krb5test: no name for " + addr)
}

// Client returns a gokrb5 client logged in from the credential cache.
func (c *Creds) Client(t testing.TB) *krb5client.Client {
	t.Helper()
	cfg, err := krb5config.Load(c.Krb5Conf)
	if err != nil {
		t.Fatalf("krb5test: %v", err)
	}
	cc, err := credentials.LoadCCache(c.CCache)
	if err != nil {
		t.Fatalf("krb5test: %v", err)
	}
	cl, err := krb5client.NewFromCCache(cc, cfg, krb5client.DisablePAFXFAST(true))
	if err != nil {
		t.Fatalf("krb5test: %v", err)
	}
	return cl
}

// ccacheWriter writes the MIT credential cache format, version 4 (big-endian).
type ccacheWriter struct{ bytes.Buffer }

func (w *ccacheWriter) u16(v uint16) { _ = binary.Write(&w.Buffer, binary.BigEndian, v) }
func (w *ccacheWriter) u32(v uint32) { _ = binary.Write(&w.Buffer, binary.BigEndian, v) }
func (w *ccacheWriter) data(b []byte) {
	w.u32(uint32(len(b)))
	w.Write(b)
}

func (w *ccacheWriter) principal(p types.PrincipalName) {
	w.u32(uint32(p.NameType))
	w.u32(uint32(len(p.NameString)))
	w.data([]byte(Realm))
	for _, s := range p.NameString {
		w.data([]byte(s))
	}
}

func (w *ccacheWriter) credential(client, server types.PrincipalName, tkt messages.Ticket, key types.EncryptionKey, start, end time.Time) error {
	raw, err := tkt.Marshal()
	if err != nil {
		return err
	}
	w.principal(client)
	w.principal(server)
	w.u16(uint16(key.KeyType))
	w.data(key.KeyValue)
	for _, ts := range []time.Time{start, start, end, end} { // auth, start, end, renew-till
		w.u32(uint32(ts.Unix()))
	}
	w.WriteByte(0)              // is_skey
	w.Write([]byte{0, 0, 0, 0}) // ticket flags
	w.u32(0)                    // addresses
	w.u32(0)                    // authdata
	w.data(raw)
	w.data(nil) // second ticket
	return nil
}
