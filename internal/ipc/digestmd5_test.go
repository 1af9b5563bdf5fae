package ipc

import (
	"bytes"
	"crypto/rc4"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// RFC 2831 section 4's example: the IMAP exchange with user chris.
func TestDigestResponseRFC2831(t *testing.T) {
	got := digestResponseValue("chris", "elwood.innosoft.com", "secret", "OA6MG9tEQGm2hh", "OA6MHXh6VqTrRk",
		"00000001", "auth", "AUTHENTICATE:imap/elwood.innosoft.com")
	assert.Equal(t, "d388dad90d4bbd760a152321f2143af7", got)
	rsp := digestResponseValue("chris", "elwood.innosoft.com", "secret", "OA6MG9tEQGm2hh", "OA6MHXh6VqTrRk",
		"00000001", "auth", ":imap/elwood.innosoft.com")
	assert.Equal(t, "ea40f60335c427b5527b84dbabcdfffd", rsp)
}

func TestDigestRespondAndVerify(t *testing.T) {
	tok := &Token{Identifier: []byte{1, 2, 3}, Password: []byte("pw"), Kind: "YARN_AM_RM_TOKEN"}
	d := newDigestMD5(tok, "", "default")
	d.cnonce = "fixedcnonce"
	resp, err := d.respond([]byte(`realm="default",nonce="abc",qop="auth",charset=utf-8,algorithm=md5-sess`))
	require.NoError(t, err)
	want := `charset=utf-8,username="AQID",realm="default",nonce="abc",nc=00000001,cnonce="fixedcnonce",` +
		`digest-uri="/default",maxbuf=65536,response=` +
		digestResponseValue("AQID", "default", "cHc=", "abc", "fixedcnonce", "00000001", "auth", "AUTHENTICATE:/default") +
		`,qop=auth`
	assert.Equal(t, want, string(resp))

	good := "rspauth=" + digestResponseValue("AQID", "default", "cHc=", "abc", "fixedcnonce", "00000001", "auth", ":/default")
	assert.NoError(t, d.verify([]byte(good)))
	assert.ErrorContains(t, d.verify([]byte("rspauth=00000000000000000000000000000000")), "does not match")
	assert.ErrorContains(t, d.verify([]byte("nothing=1")), "no rspauth")
}

func TestDigestRespondQOP(t *testing.T) {
	tok := &Token{Identifier: []byte{1}, Password: []byte{2}}
	for _, tc := range []struct {
		offered, chosen string // chosen "": refused
	}{
		{"auth-conf", ""}, // no cipher offered (below: rc4 is)
		{"auth-conf,auth-int,auth", "auth"},
		{"auth-int", "auth-int"},
		{"auth-int,auth-conf", "auth-int"},
		{"auth-conf,auth-int", "auth-int"},
	} {
		t.Run(tc.offered, func(t *testing.T) {
			d := newDigestMD5(tok, "", "default")
			d.cnonce = "fixedcnonce"
			resp, err := d.respond([]byte(`nonce="n",qop="` + tc.offered + `",algorithm=md5-sess`))
			if tc.chosen == "" {
				require.ErrorIs(t, err, ErrUnsupportedQOP)
				assert.Contains(t, err.Error(), "hadoop.rpc.protection")
				assert.Contains(t, err.Error(), tc.offered)
				return
			}
			require.NoError(t, err)
			assert.True(t, strings.HasSuffix(string(resp), ",qop="+tc.chosen), "%s", resp)
			// With a security layer, RFC 2831 adds 32 zeros to A2, in the response and in rspauth.
			suffix := ""
			if tc.chosen == "auth-int" {
				suffix = ":00000000000000000000000000000000"
			}
			want := digestResponseValue("AQ==", "", "Ag==", "n", "fixedcnonce", "00000001", tc.chosen, "AUTHENTICATE:/default"+suffix)
			assert.Contains(t, string(resp), "response="+want+",")
			assert.NoError(t, d.verify([]byte("rspauth="+digestResponseValue("AQ==", "", "Ag==", "n", "fixedcnonce", "00000001", tc.chosen, ":/default"+suffix))))
		})
	}
	_, err := newDigestMD5(tok, "", "default").respond([]byte(`nonce="n",qop="auth-int",algorithm=md5-sess,maxbuf=abc`))
	assert.ErrorContains(t, err, `maxbuf "abc"`)
}

// TestDigestIntegrity wraps and unwraps with the keys of one authentication: what the client
// sends the server checks under the client-to-server key, and the other way round; a changed
// byte, a replayed or reordered message and a short one are refused.
func TestDigestIntegrity(t *testing.T) {
	d := newDigestMD5(&Token{Identifier: []byte("id"), Password: []byte("pw")}, "", "default")
	d.cnonce = "c"
	_, err := d.respond([]byte(`realm="default",nonce="n",qop="auth-int",algorithm=md5-sess,maxbuf=1024`))
	require.NoError(t, err)
	layer, chunk, err := d.securityLayer("nn:8020")
	require.NoError(t, err)
	client := layer.(*digestIntegrity)
	assert.Equal(t, 1024-16, chunk, "a wrapped message fits the server's maxbuf")
	// The server's view: the same keys, swapped.
	server := &digestIntegrity{sendKey: client.recvKey, recvKey: client.sendKey}

	for i, msg := range []string{"first", "", "third"} {
		tok := relay(t, client, server, msg)
		require.Len(t, tok, len(msg)+16)
		assert.Equal(t, []byte{0, 1, 0, 0, 0, byte(i)}, tok[len(tok)-6:], "type 1, sequence number %d", i)
	}
	reply := relay(t, server, client, "answer")

	next, err := server.Wrap([]byte("next"))
	require.NoError(t, err)
	tampered := bytes.Clone(next)
	tampered[0] ^= 1
	_, err = client.Unwrap(tampered)
	assert.ErrorIs(t, err, ErrAuthentication)
	_, err = client.Unwrap(reply) // replayed
	assert.ErrorIs(t, err, ErrAuthentication)
	_, err = client.Unwrap([]byte("short"))
	assert.ErrorIs(t, err, ErrProtocol)
	got, err := client.Unwrap(next)
	require.NoError(t, err, "the refused ones did not move the sequence on")
	assert.Equal(t, "next", string(got))

	_, _, err = newDigestMD5(&Token{}, "", "default").securityLayer("x")
	assert.Error(t, err, "no layer before an auth-int authentication")
}

func TestParseDigestChallenge(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    *DigestChallenge
		wantErr string
	}{
		{
			name: "hadoop",
			in:   `realm="default",nonce="sHEq+8sVq0FBqSvqGl7pG/Nvt3FfJ+hQbC38tJ/v",qop="auth",charset=utf-8,algorithm=md5-sess`,
			want: &DigestChallenge{Realms: []string{"default"}, Nonce: "sHEq+8sVq0FBqSvqGl7pG/Nvt3FfJ+hQbC38tJ/v", QOP: []string{"auth"}, Charset: "utf-8", Algorithm: "md5-sess"},
		},
		{
			name: "spaces, empty elements, escapes, defaults",
			in:   ` , realm = "a\"b" ,, nonce="x\\y",algorithm=MD5-SESS, maxbuf=1024, cipher="rc4,3des", stale=true `,
			want: &DigestChallenge{Realms: []string{`a"b`}, Nonce: `x\y`, QOP: []string{"auth"}, Algorithm: "MD5-SESS", MaxBuf: "1024", Ciphers: []string{"rc4", "3des"}, Stale: true},
		},
		{
			name: "two realms",
			in:   `realm="r1",realm="r2",nonce="n",algorithm=md5-sess,qop="auth-int, auth"`,
			want: &DigestChallenge{Realms: []string{"r1", "r2"}, Nonce: "n", QOP: []string{"auth-int", "auth"}, Algorithm: "md5-sess"},
		},
		{name: "no nonce", in: `realm="r",algorithm=md5-sess`, wantErr: "no nonce"},
		{name: "wrong algorithm", in: `nonce="n",algorithm=md5`, wantErr: "want md5-sess"},
		{name: "wrong charset", in: `nonce="n",algorithm=md5-sess,charset=latin1`, wantErr: "want utf-8"},
		{name: "repeated nonce", in: `nonce="n",nonce="m",algorithm=md5-sess`, wantErr: "repeats"},
		{name: "unterminated", in: `nonce="n`, wantErr: "unterminated"},
		{name: "no value", in: `nonce`, wantErr: "no value"},
		{name: "garbage after value", in: `nonce="n"x`, wantErr: "expected ','"},
		{name: "no name", in: `="n"`, wantErr: "expected a directive name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDigestChallenge([]byte(tt.in))
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestDigestPrivacy: with qop auth-conf and cipher rc4 the messages travel encrypted both ways
// (nothing of them in clear), under keys of their own per direction; tampering and replay are
// refused.
func TestDigestPrivacy(t *testing.T) {
	d := newDigestMD5(&Token{Identifier: []byte("id"), Password: []byte("pw")}, "", "default")
	d.cnonce = "c"
	resp, err := d.respond([]byte(`realm="default",nonce="n",qop="auth-conf",cipher="3des,rc4,des,rc4-56,rc4-40",algorithm=md5-sess`))
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(resp), ",qop=auth-conf,cipher=rc4"), "%s", resp)
	client, _, err := d.securityLayer("nn:8020")
	require.NoError(t, err)
	// The server's side, built from the same session: the client's keys swapped.
	ha1 := digestHA1(d.username, d.realm, d.password, d.nonce, d.cnonce)
	sendC, err := rc4.NewCipher(md5Sum(ha1[:], digestServerSealMagic))
	require.NoError(t, err)
	recvC, err := rc4.NewCipher(md5Sum(ha1[:], digestClientSealMagic))
	require.NoError(t, err)
	cm := client.(*digestIntegrity)
	require.NotNil(t, cm.sendRC4, "auth-conf encrypts")
	server := &digestIntegrity{sendKey: cm.recvKey, recvKey: cm.sendKey, sendRC4: sendC, recvRC4: recvC}

	secret := "getDelegationToken for alice"
	for i := 0; i < 3; i++ {
		tok := relay(t, client, server, secret)
		assert.NotContains(t, string(tok), "alice", "encrypted")
		assert.Equal(t, []byte{0, 1, 0, 0, 0, byte(i)}, tok[len(tok)-6:])
	}
	reply := relay(t, server, client, "token")
	_, err = client.Unwrap(reply)
	assert.ErrorIs(t, err, ErrAuthentication, "replayed")
	next, err := server.Wrap([]byte("next"))
	require.NoError(t, err)
	next[0] ^= 1
	_, err = client.Unwrap(next)
	assert.ErrorIs(t, err, ErrAuthentication, "tampered")
}

// relay wraps msg on from, checks that to unwraps it unchanged, and returns the wrapped token.
func relay(t *testing.T, from, to SecurityLayer, msg string) []byte {
	t.Helper()
	tok, err := from.Wrap([]byte(msg))
	require.NoError(t, err)
	got, err := to.Unwrap(tok)
	require.NoError(t, err)
	assert.Equal(t, msg, string(got))
	return tok
}
