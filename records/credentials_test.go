package records

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.NewReplacer(" ", "", "\n", "", "\t", "").Replace(s))
	require.NoError(t, err)
	return b
}

// Bytes written by Hadoop 3.5.0 (see testdata/README.md).
const (
	javaAMRMIdentifier = "0a0d0a0908011080d095ffbc3110011007"
	javaHDTSv0         = "4844545300010a616d726d2d616c696173110a0d0a0908011080d095ffbc311001100714010e1b2835424f5c697683909daab7c4d1deebf8105941524e5f414d5f524d5f544f4b454e00010c7365637265742d616c69617304010203ff"
	javaHDTSv1         = "4844545301630a4b0a0a616d726d2d616c696173123d0a110a0d0a0908011080d095ffbc31100110071214010e1b2835424f5c697683909daab7c4d1deebf81a105941524e5f414d5f524d5f544f4b454e220012140a0c7365637265742d616c6961731a04010203ff"
)

func javaCredentials(t *testing.T) *Credentials {
	pw := make([]byte, 20)
	for i := range pw {
		pw[i] = byte(i*13 + 1)
	}
	c := NewCredentials()
	c.AddToken("amrm-alias", Token{Identifier: mustHex(t, javaAMRMIdentifier), Password: pw, Kind: KindAMRMToken, Service: ""})
	c.Secrets["secret-alias"] = []byte{1, 2, 3, 0xff}
	return c
}

func TestCredentialsMatchHadoop(t *testing.T) {
	for _, tt := range []struct {
		format TokenFormat
		hex    string
		file   string
	}{
		{FormatWritable, javaHDTSv0, "testdata/hdts-v0-hadoop-3.5.0.bin"},
		{FormatProtobuf, javaHDTSv1, "testdata/hdts-v1-hadoop-3.5.0.bin"},
	} {
		t.Run(tt.format.String(), func(t *testing.T) {
			want := javaCredentials(t)
			want.Format = tt.format
			fileBytes, err := os.ReadFile(tt.file)
			require.NoError(t, err)
			require.Equal(t, mustHex(t, tt.hex), fileBytes)

			got, err := ReadTokenFile(tt.file)
			require.NoError(t, err)
			assert.Equal(t, want, got)

			b, err := want.Marshal(tt.format)
			require.NoError(t, err)
			assert.Equal(t, fileBytes, b, "byte-identical to Hadoop's output")
		})
	}
}

func TestVLongMatchesHadoop(t *testing.T) {
	// WritableUtils.writeVLong output from Hadoop 3.5.0.
	vectors := []struct {
		v   int64
		hex string
	}{
		{0, "00"}, {1, "01"}, {-1, "ff"}, {5, "05"}, {127, "7f"}, {128, "8f80"}, {-112, "90"}, {-113, "8770"},
		{200, "8fc8"}, {255, "8fff"}, {256, "8e0100"}, {-256, "87ff"}, {65535, "8effff"}, {-65536, "86ffff"},
		{2147483647, "8c7fffffff"}, {-2147483648, "847fffffff"}, {9223372036854775807, "887fffffffffffffff"},
		{-9223372036854775808, "807fffffffffffffff"}, {1099511627776, "8a010000000000"},
	}
	for _, v := range vectors {
		b := appendVLong(nil, v.v)
		assert.Equal(t, v.hex, hex.EncodeToString(b), "encode %d", v.v)
		r := &reader{b: b}
		got, err := r.vlong("x")
		require.NoError(t, err)
		assert.Equal(t, v.v, got)
		assert.Equal(t, len(b), r.off)
	}
}

func TestParseCredentialsErrors(t *testing.T) {
	tests := []struct {
		name, hex, want string
	}{
		{"empty", "", "no HDTS magic"},
		{"wrong magic", "48445453", "no HDTS magic"},
		{"other magic", "4142434400", "no HDTS magic"},
		{"unknown version", "4844545302", "unknown format version 2"},
		{"truncated count", "48445453008f", "unexpected end"},
		{"negative count", "4844545300ff", "impossible"},
		{"count beyond data", "484454530005", "impossible"},
		{"alias longer than data", "48445453000105", "length 5"},
		{"truncated token", "4844545300010161", "unexpected end"},
		{"int overflow", "4844545300887fffffffffffffff", "fit in an int"},
		{"no secrets count", "484454530000", "unexpected end"},
		{"proto length beyond", "484454530105", "CredentialsProto of 5 bytes"},
		{"proto garbage", "48445453010201ff", "CredentialsProto"},
		{"proto missing required alias", "484454530102" + "0a00", "CredentialsProto"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCredentials(mustHex(t, tt.hex))
			require.ErrorIs(t, err, ErrBadTokenFile)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

func TestReadTokenFileNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.tokens")
	require.NoError(t, os.WriteFile(p, []byte("HDTS\x07"), 0o600))
	_, err := ReadTokenFile(p)
	require.ErrorIs(t, err, ErrBadTokenFile)
	assert.ErrorContains(t, err, p)
	_, err = ReadTokenFile(filepath.Join(t.TempDir(), "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestWriteTokenFileRoundTrip(t *testing.T) {
	c := javaCredentials(t)
	c.AddToken("hdfs", Token{Identifier: []byte("dt"), Password: []byte("pw"), Kind: "HDFS_DELEGATION_TOKEN", Service: "10.0.0.1:8020"})
	for _, f := range []TokenFormat{FormatWritable, FormatProtobuf} {
		p := filepath.Join(t.TempDir(), "container_tokens")
		require.NoError(t, WriteTokenFile(p, c, f))
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		got, err := ReadTokenFile(p)
		require.NoError(t, err)
		want := c.WithoutKinds()
		want.Format = f
		assert.Equal(t, want, got)
	}
}

func TestCredentialsFromEnv(t *testing.T) {
	t.Setenv(EnvTokenFile, "")
	_, err := CredentialsFromEnv()
	assert.ErrorContains(t, err, EnvTokenFile)
	t.Setenv(EnvTokenFile, "testdata/hdts-v0-hadoop-3.5.0.bin")
	c, err := CredentialsFromEnv()
	require.NoError(t, err)
	_, tok, ok := c.TokenByKind(KindAMRMToken)
	require.True(t, ok)
	assert.Len(t, tok.Password, 20)
}

func TestTokenSelectionAndFiltering(t *testing.T) {
	c := javaCredentials(t)
	c.AddToken("b-hdfs", Token{Kind: "HDFS_DELEGATION_TOKEN", Identifier: []byte{1}})
	c.AddToken("a-hdfs", Token{Kind: "HDFS_DELEGATION_TOKEN", Identifier: []byte{2}})
	alias, tok, ok := c.TokenByKind("HDFS_DELEGATION_TOKEN")
	require.True(t, ok)
	assert.Equal(t, "a-hdfs", alias)
	assert.Equal(t, []byte{2}, tok.Identifier)
	_, _, ok = c.TokenByKind("nope")
	assert.False(t, ok)

	w := c.WithoutKinds(KindAMRMToken)
	assert.Len(t, w.Tokens, 2)
	assert.NotContains(t, w.Tokens, "amrm-alias")
	assert.Contains(t, c.Tokens, "amrm-alias", "the original is untouched")
	assert.Equal(t, c.Secrets, w.Secrets)
}

func TestTokenNeverPrintsPassword(t *testing.T) {
	tok := Token{Identifier: []byte("ident"), Password: []byte("hunter2-secret"), Kind: KindAMRMToken, Service: "rm:8030"}
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	logger.Info("token", "tok", tok)
	logger.Info("token", "tok", &tok)
	for _, s := range []string{tok.String(), buf.String(), strings.Join([]string{
		fmt.Sprintf("%v", tok), fmt.Sprintf("%+v", tok), fmt.Sprintf("%#v", tok), fmt.Sprintf("%s", tok), fmt.Sprintf("%v", &tok),
	}, " ")} {
		assert.NotContains(t, s, "hunter2")
		assert.NotContains(t, s, hex.EncodeToString(tok.Password))
	}
	assert.Contains(t, buf.String(), KindAMRMToken)
}

// javaAMRMTokenWritable is the token's Writable form inside javaHDTSv0 (after its alias), which
// Hadoop's Token.encodeToUrlString encodes in URL-safe base64.
const javaAMRMTokenWritable = "110a0d0a0908011080d095ffbc311001100714010e1b2835424f5c697683909daab7c4d1deebf8105941524e5f414d5f524d5f544f4b454e00"

func TestTokenURLString(t *testing.T) {
	tok := javaCredentials(t).Tokens["amrm-alias"]
	want := base64.RawURLEncoding.EncodeToString(mustHex(t, javaAMRMTokenWritable))
	assert.Equal(t, want, tok.EncodeToURLString())
	assert.NotContains(t, tok.EncodeToURLString(), "=", "no padding")
	for _, s := range []string{want, want + "==", base64.StdEncoding.EncodeToString(mustHex(t, javaAMRMTokenWritable))} {
		got, err := DecodeTokenURLString(s)
		require.NoError(t, err, s)
		assert.Equal(t, tok, got)
	}
	empty := Token{Identifier: []byte{}, Password: []byte{}}
	got, err := DecodeTokenURLString(empty.EncodeToURLString())
	require.NoError(t, err)
	assert.Equal(t, empty, got)
	for _, bad := range []string{"!!", base64.RawURLEncoding.EncodeToString([]byte{5, 1}),
		base64.RawURLEncoding.EncodeToString(append(mustHex(t, javaAMRMTokenWritable), 0))} {
		_, err := DecodeTokenURLString(bad)
		assert.ErrorIs(t, err, ErrBadToken, bad)
		assert.NotErrorIs(t, err, ErrBadTokenFile)
	}
}
