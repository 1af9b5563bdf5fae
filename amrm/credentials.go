package amrm

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/yarn-er/yarn-er/internal/hadooppb/commonpb"
	"github.com/yarn-er/yarn-er/internal/hadooppb/yarnpb"
	"github.com/yarn-er/yarn-er/internal/ipc"
)

// Token kinds yarn-er handles.
const (
	// KindAMRMToken is the AMRMToken's kind (AMRMTokenIdentifier.KIND_NAME).
	KindAMRMToken = "YARN_AM_RM_TOKEN"
	// KindNMToken is the kind of the tokens that authenticate an AM to a NodeManager.
	KindNMToken = "NMToken"
	// KindContainerToken is the kind of a container's token, passed to startContainers.
	KindContainerToken = "ContainerToken"
)

// EnvTokenFile is the environment variable naming a container's token storage file.
const EnvTokenFile = "HADOOP_TOKEN_FILE_LOCATION"

// Token is a Hadoop security token. Its String, GoString and LogValue never show the password.
type Token struct {
	Identifier []byte
	Password   []byte
	Kind       string
	Service    string
}

// String describes the token without its secret parts.
func (t Token) String() string {
	return fmt.Sprintf("Token{kind=%q service=%q identifier=%d bytes}", t.Kind, t.Service, len(t.Identifier))
}

// GoString keeps %#v from printing the password.
func (t Token) GoString() string { return "amrm." + t.String() }

// LogValue keeps slog from logging the password.
func (t Token) LogValue() slog.Value {
	return slog.GroupValue(slog.String("kind", t.Kind), slog.String("service", t.Service))
}

// IsZero reports whether the token is empty.
func (t Token) IsZero() bool {
	return len(t.Identifier) == 0 && len(t.Password) == 0 && t.Kind == "" && t.Service == ""
}

func (t Token) clone() Token {
	return Token{Identifier: bytes.Clone(t.Identifier), Password: bytes.Clone(t.Password), Kind: t.Kind, Service: t.Service}
}

func tokenFromProto(p *commonpb.TokenProto) Token {
	if p == nil {
		return Token{}
	}
	return Token{Identifier: bytes.Clone(p.GetIdentifier()), Password: bytes.Clone(p.GetPassword()), Kind: p.GetKind(), Service: p.GetService()}
}

func (t Token) proto() *commonpb.TokenProto {
	return &commonpb.TokenProto{
		Identifier: nonNil(t.Identifier), Password: nonNil(t.Password),
		Kind: proto.String(t.Kind), Service: proto.String(t.Service),
	}
}

// ipcToken is the token as the ipc package takes it.
func (t Token) ipcToken() *ipc.Token {
	it := ipc.Token(t)
	return &it
}

// nonNil returns b, or an empty slice for nil: protobuf leaves a nil bytes field out (a token's
// required identifier and password must be sent even when empty), and decoded values are never nil.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// AMRMAttempt decodes an AMRMToken's identifier and returns the application attempt it was issued
// to, e.g. appattempt_1700000000000_0001_000001.
func (t Token) AMRMAttempt() (string, error) {
	if t.Kind != KindAMRMToken {
		return "", fmt.Errorf("amrm: token of kind %q is not an AMRMToken", t.Kind)
	}
	var id yarnpb.AMRMTokenIdentifierProto
	if err := proto.Unmarshal(t.Identifier, &id); err != nil || id.AppAttemptId == nil {
		return "", fmt.Errorf("amrm: AMRMToken identifier does not decode: %v", err)
	}
	a := id.GetAppAttemptId()
	return fmt.Sprintf("appattempt_%d_%04d_%06d", a.GetApplicationId().GetClusterTimestamp(), a.GetApplicationId().GetId(), a.GetAttemptId()), nil
}

// TokenFormat is the serialization of a token storage file after its "HDTS" magic.
type TokenFormat byte

const (
	// FormatWritable is version 0, Hadoop's Writable serialization, which Hadoop writes by default.
	FormatWritable TokenFormat = 0
	// FormatProtobuf is version 1, a varint-delimited CredentialsProto.
	FormatProtobuf TokenFormat = 1
)

// String returns the format's name.
func (f TokenFormat) String() string {
	switch f {
	case FormatWritable:
		return "writable"
	case FormatProtobuf:
		return "protobuf"
	}
	return fmt.Sprintf("TokenFormat(%d)", byte(f))
}

// Credentials are tokens and secret keys by alias, as stored in a Hadoop token storage file.
type Credentials struct {
	// Tokens by alias.
	Tokens map[string]Token
	// Secrets by alias.
	Secrets map[string][]byte
	// Format is the format the credentials were read in (FormatWritable for new ones).
	Format TokenFormat
}

// NewCredentials returns empty credentials.
func NewCredentials() *Credentials {
	return &Credentials{Tokens: map[string]Token{}, Secrets: map[string][]byte{}}
}

// AddToken stores t under alias, replacing any token with that alias.
func (c *Credentials) AddToken(alias string, t Token) {
	if c.Tokens == nil {
		c.Tokens = map[string]Token{}
	}
	c.Tokens[alias] = t
}

// TokenByKind returns the token of the given kind; with several, the one whose alias sorts first.
func (c *Credentials) TokenByKind(kind string) (alias string, t Token, ok bool) {
	if c == nil {
		return "", Token{}, false
	}
	for _, a := range slices.Sorted(maps.Keys(c.Tokens)) {
		if c.Tokens[a].Kind == kind {
			return a, c.Tokens[a], true
		}
	}
	return "", Token{}, false
}

// WithoutKinds returns a copy of the credentials without the tokens of the given kinds.
func (c *Credentials) WithoutKinds(kinds ...string) *Credentials {
	out := NewCredentials()
	if c == nil {
		return out
	}
	out.Format = c.Format
	for a, t := range c.Tokens {
		if !slices.Contains(kinds, t.Kind) {
			out.Tokens[a] = t.clone()
		}
	}
	for a, s := range c.Secrets {
		out.Secrets[a] = bytes.Clone(s)
	}
	return out
}

var tokenStorageMagic = []byte("HDTS")

// ErrBadTokenFile reports a token storage file that cannot be decoded.
var ErrBadTokenFile = errors.New("amrm: bad token storage file")

// ParseCredentials decodes the contents of a Hadoop token storage file ("HDTS", format 0 or 1).
func ParseCredentials(b []byte) (*Credentials, error) {
	if len(b) < 5 || !bytes.Equal(b[:4], tokenStorageMagic) {
		return nil, fmt.Errorf("%w: no HDTS magic", ErrBadTokenFile)
	}
	c := NewCredentials()
	c.Format = TokenFormat(b[4])
	var err error
	switch c.Format {
	case FormatWritable:
		err = c.readWritable(&reader{b: b[5:]})
	case FormatProtobuf:
		err = c.readProto(b[5:])
	default:
		err = fmt.Errorf("unknown format version %d (want 0 or 1)", b[4])
	}
	if err != nil {
		if !errors.Is(err, ErrBadTokenFile) {
			err = fmt.Errorf("%w: %v", ErrBadTokenFile, err)
		}
		return nil, err
	}
	return c, nil
}

func (c *Credentials) readWritable(r *reader) error {
	n, err := r.count("token")
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		alias, err := r.text("token alias")
		if err != nil {
			return err
		}
		var t Token
		if t.Identifier, err = r.bytes("token identifier"); err != nil {
			return err
		}
		if t.Password, err = r.bytes("token password"); err != nil {
			return err
		}
		if t.Kind, err = r.text("token kind"); err != nil {
			return err
		}
		if t.Service, err = r.text("token service"); err != nil {
			return err
		}
		c.Tokens[alias] = t
	}
	if n, err = r.count("secret"); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		alias, err := r.text("secret alias")
		if err != nil {
			return err
		}
		s, err := r.bytes("secret")
		if err != nil {
			return err
		}
		c.Secrets[alias] = s
	}
	return nil
}

func (c *Credentials) readProto(b []byte) error {
	n, vl := protowire.ConsumeVarint(b)
	if vl < 0 {
		return fmt.Errorf("bad CredentialsProto length: %v", protowire.ParseError(vl))
	}
	if n > uint64(len(b)-vl) {
		return fmt.Errorf("CredentialsProto of %d bytes in %d", n, len(b)-vl)
	}
	var p commonpb.CredentialsProto
	if err := proto.Unmarshal(b[vl:vl+int(n)], &p); err != nil {
		return fmt.Errorf("CredentialsProto: %v", err)
	}
	for _, kv := range p.GetTokens() {
		c.Tokens[kv.GetAlias()] = tokenFromProto(kv.GetToken())
	}
	for _, kv := range p.GetSecrets() {
		c.Secrets[kv.GetAlias()] = nonNil(bytes.Clone(kv.GetSecret()))
	}
	return nil
}

// Marshal encodes the credentials as a token storage file, aliases in sorted order.
func (c *Credentials) Marshal(format TokenFormat) ([]byte, error) {
	b := append([]byte(nil), tokenStorageMagic...)
	b = append(b, byte(format))
	tokenAliases := slices.Sorted(maps.Keys(c.Tokens))
	secretAliases := slices.Sorted(maps.Keys(c.Secrets))
	switch format {
	case FormatWritable:
		b = appendVLong(b, int64(len(tokenAliases)))
		for _, a := range tokenAliases {
			t := c.Tokens[a]
			b = appendText(b, a)
			b = appendText(b, string(t.Identifier))
			b = appendText(b, string(t.Password))
			b = appendText(b, t.Kind)
			b = appendText(b, t.Service)
		}
		b = appendVLong(b, int64(len(secretAliases)))
		for _, a := range secretAliases {
			b = appendText(b, a)
			b = appendText(b, string(c.Secrets[a]))
		}
		return b, nil
	case FormatProtobuf:
		var p commonpb.CredentialsProto
		for _, a := range tokenAliases {
			p.Tokens = append(p.Tokens, &commonpb.CredentialsKVProto{Alias: proto.String(a), Token: c.Tokens[a].proto()})
		}
		for _, a := range secretAliases {
			p.Secrets = append(p.Secrets, &commonpb.CredentialsKVProto{Alias: proto.String(a), Secret: nonNil(c.Secrets[a])})
		}
		body, err := proto.Marshal(&p)
		if err != nil {
			return nil, fmt.Errorf("amrm: encode credentials: %w", err)
		}
		b = protowire.AppendVarint(b, uint64(len(body)))
		return append(b, body...), nil
	}
	return nil, fmt.Errorf("amrm: unknown token file format %d", format)
}

// ReadTokenFile reads a Hadoop token storage file, such as the one named by
// $HADOOP_TOKEN_FILE_LOCATION in a YARN container.
func ReadTokenFile(path string) (*Credentials, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("amrm: read token file: %w", err)
	}
	c, err := ParseCredentials(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// CredentialsFromEnv reads the token file named by $HADOOP_TOKEN_FILE_LOCATION.
func CredentialsFromEnv() (*Credentials, error) {
	path := os.Getenv(EnvTokenFile)
	if path == "" {
		return nil, fmt.Errorf("amrm: $%s is not set; an ApplicationMaster started by YARN has it", EnvTokenFile)
	}
	return ReadTokenFile(path)
}

// WriteTokenFile writes the credentials to path in the given format, readable by the owner only.
// It writes a temporary file in the same directory and renames it into place.
func WriteTokenFile(path string, c *Credentials, format TokenFormat) error {
	b, err := c.Marshal(format)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".hdts-*")
	if err != nil {
		return fmt.Errorf("amrm: write token file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		return fmt.Errorf("amrm: write token file: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return fmt.Errorf("amrm: write token file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("amrm: write token file %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("amrm: write token file: %w", err)
	}
	return nil
}

// reader decodes Hadoop Writable primitives.
type reader struct {
	b   []byte
	off int
}

func (r *reader) fail(what, why string) error {
	return fmt.Errorf("%w: %s at offset %d: %s", ErrBadTokenFile, what, r.off+5, why)
}

// vlong decodes a WritableUtils variable-length long.
func (r *reader) vlong(what string) (int64, error) {
	if r.off >= len(r.b) {
		return 0, r.fail(what, "unexpected end of file")
	}
	first := int8(r.b[r.off])
	r.off++
	if first >= -112 {
		return int64(first), nil
	}
	var size int
	if first < -120 {
		size = -119 - int(first)
	} else {
		size = -111 - int(first)
	}
	if r.off+size-1 > len(r.b) {
		return 0, r.fail(what, "unexpected end of file")
	}
	var v int64
	for i := 0; i < size-1; i++ {
		v = v<<8 | int64(r.b[r.off])
		r.off++
	}
	if first < -120 {
		v = ^v
	}
	return v, nil
}

// vint decodes a WritableUtils variable-length int.
func (r *reader) vint(what string) (int, error) {
	v, err := r.vlong(what)
	if err != nil {
		return 0, err
	}
	if v < -1<<31 || v > 1<<31-1 {
		return 0, r.fail(what, "value too long to fit in an int")
	}
	return int(v), nil
}

// count reads a non-negative element count; every element takes at least one byte.
func (r *reader) count(what string) (int, error) {
	n, err := r.vint(what + " count")
	if err != nil {
		return 0, err
	}
	if n < 0 || n > len(r.b)-r.off {
		return 0, r.fail(what+" count", fmt.Sprintf("%d is impossible with %d bytes left", n, len(r.b)-r.off))
	}
	return n, nil
}

func (r *reader) bytes(what string) ([]byte, error) {
	n, err := r.vint(what + " length")
	if err != nil {
		return nil, err
	}
	if n < 0 || n > len(r.b)-r.off {
		return nil, r.fail(what, fmt.Sprintf("length %d with %d bytes left", n, len(r.b)-r.off))
	}
	out := nonNil(bytes.Clone(r.b[r.off : r.off+n]))
	r.off += n
	return out, nil
}

func (r *reader) text(what string) (string, error) {
	b, err := r.bytes(what)
	return string(b), err
}

// appendVLong encodes v as a WritableUtils variable-length long.
func appendVLong(b []byte, v int64) []byte {
	if v >= -112 && v <= 127 {
		return append(b, byte(v))
	}
	l := -112
	if v < 0 {
		v = ^v
		l = -120
	}
	for tmp := v; tmp != 0; tmp >>= 8 {
		l--
	}
	b = append(b, byte(int8(l)))
	n := -(l + 112)
	if l < -120 {
		n = -(l + 120)
	}
	for i := n; i > 0; i-- {
		b = append(b, byte(v>>((i-1)*8)))
	}
	return b
}

func appendText(b []byte, s string) []byte {
	b = appendVLong(b, int64(len(s)))
	return append(b, s...)
}
