package records

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/yarn-er/yarn-er/internal/boundedfile"
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
func (t Token) GoString() string { return "records." + t.String() }

// LogValue keeps slog from logging the password.
func (t Token) LogValue() slog.Value {
	return slog.GroupValue(slog.String("kind", t.Kind), slog.String("service", t.Service))
}

// IsZero reports whether the token is empty.
func (t Token) IsZero() bool {
	return len(t.Identifier) == 0 && len(t.Password) == 0 && t.Kind == "" && t.Service == ""
}

// Clone returns a deep copy of the token.
func (t Token) Clone() Token {
	return Token{Identifier: bytes.Clone(t.Identifier), Password: bytes.Clone(t.Password), Kind: t.Kind, Service: t.Service}
}

// nonNil returns b, or an empty slice for nil: protobuf leaves a nil bytes field out (a token's
// required identifier and password must be sent even when empty), and decoded values are never nil.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// EncodeToURLString encodes the token as Hadoop's Token.encodeToUrlString does, the form the RM's
// REST submission takes in its credentials: the token's Writable serialization (identifier and
// password with their lengths, kind and service as Text) in URL-safe base64 without padding.
func (t Token) EncodeToURLString() string {
	return base64.RawURLEncoding.EncodeToString(t.appendWritable(nil))
}

// appendWritable appends the token's Writable serialization (Token.write).
func (t Token) appendWritable(b []byte) []byte {
	b = appendText(b, string(t.Identifier))
	b = appendText(b, string(t.Password))
	b = appendText(b, t.Kind)
	return appendText(b, t.Service)
}

// DecodeTokenURLString decodes a token from Hadoop's URL string form (Token.decodeFromUrlString):
// URL-safe or standard base64, with or without padding. Errors wrap ErrBadToken.
func DecodeTokenURLString(s string) (Token, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	s = strings.NewReplacer("+", "-", "/", "_").Replace(s)
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Token{}, fmt.Errorf("%w: not base64: %v", ErrBadToken, err)
	}
	r := &reader{b: raw, bad: ErrBadToken}
	var t Token
	if t.Identifier, err = r.bytes("token identifier"); err == nil {
		if t.Password, err = r.bytes("token password"); err == nil {
			if t.Kind, err = r.text("token kind"); err == nil {
				t.Service, err = r.text("token service")
			}
		}
	}
	if err == nil && r.off != len(raw) {
		err = fmt.Errorf("%d bytes after the token", len(raw)-r.off)
	}
	switch {
	case errors.Is(err, ErrBadToken):
		return Token{}, err
	case err != nil:
		return Token{}, fmt.Errorf("%w: %v", ErrBadToken, err)
	}
	return t, nil
}

// ErrBadToken reports a token in URL string form that cannot be decoded.
var ErrBadToken = errors.New("bad token")

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
			out.Tokens[a] = t.Clone()
		}
	}
	for a, s := range c.Secrets {
		out.Secrets[a] = bytes.Clone(s)
	}
	return out
}

var tokenStorageMagic = []byte("HDTS")

// ErrBadTokenFile reports a token storage file that cannot be decoded.
var ErrBadTokenFile = errors.New("bad token storage file")

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
		err = c.readWritable(&reader{b: b[5:], base: 5})
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

// CredentialsProto field numbers (Hadoop's Security.proto).
const (
	fieldCredTokens  = 1 // CredentialsProto.tokens
	fieldCredSecrets = 2 // CredentialsProto.secrets
	fieldKVAlias     = 1 // CredentialsKVProto.alias
	fieldKVToken     = 2 // CredentialsKVProto.token
	fieldKVSecret    = 3 // CredentialsKVProto.secret
	fieldTokIdent    = 1 // TokenProto.identifier
	fieldTokPassword = 2 // TokenProto.password
	fieldTokKind     = 3 // TokenProto.kind
	fieldTokService  = 4 // TokenProto.service
)

// readProto reads a varint-delimited CredentialsProto.
func (c *Credentials) readProto(b []byte) error {
	n, vl := protowire.ConsumeVarint(b)
	if vl < 0 {
		return fmt.Errorf("bad CredentialsProto length: %v", protowire.ParseError(vl))
	}
	if n > uint64(len(b)-vl) {
		return fmt.Errorf("CredentialsProto of %d bytes in %d", n, len(b)-vl)
	}
	return eachField(b[vl:vl+int(n)], "CredentialsProto", func(num protowire.Number, v []byte) error {
		if num != fieldCredTokens && num != fieldCredSecrets {
			return nil
		}
		var alias string
		var tok Token
		var secret []byte
		var seenKV [1]bool
		var seenTok [4]bool // required fields seen: alias; identifier, password, kind, service
		hasToken := false
		err := eachField(v, "CredentialsKVProto", func(num protowire.Number, v []byte) error {
			switch num {
			case fieldKVAlias:
				alias, seenKV[0] = string(v), true
			case fieldKVToken:
				hasToken = true
				return eachField(v, "TokenProto", func(num protowire.Number, v []byte) error {
					switch num {
					case fieldTokIdent:
						tok.Identifier = bytes.Clone(v)
					case fieldTokPassword:
						tok.Password = bytes.Clone(v)
					case fieldTokKind:
						tok.Kind = string(v)
					case fieldTokService:
						tok.Service = string(v)
					default:
						return nil
					}
					seenTok[num-1] = true
					return nil
				})
			case fieldKVSecret:
				secret = bytes.Clone(v)
			}
			return nil
		})
		switch {
		case err != nil:
			return err
		case !seenKV[0]:
			return errors.New("CredentialsProto: CredentialsKVProto without its required alias")
		case hasToken && seenTok != [4]bool{true, true, true, true}:
			return fmt.Errorf("CredentialsProto: token %q lacks a required field (identifier, password, kind, service)", alias)
		}
		if num == fieldCredTokens {
			tok.Identifier, tok.Password = nonNil(tok.Identifier), nonNil(tok.Password)
			c.Tokens[alias] = tok
		} else {
			c.Secrets[alias] = nonNil(secret)
		}
		return nil
	})
}

// eachField calls fn with every length-delimited field of a protobuf message (the only wire type
// the credential messages use); other wire types are skipped as unknown fields.
func eachField(b []byte, what string, fn func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%s: %v", what, protowire.ParseError(n))
		}
		b = b[n:]
		if typ != protowire.BytesType {
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return fmt.Errorf("%s: %v", what, protowire.ParseError(m))
			}
			b = b[m:]
			continue
		}
		v, m := protowire.ConsumeBytes(b)
		if m < 0 {
			return fmt.Errorf("%s: %v", what, protowire.ParseError(m))
		}
		if err := fn(num, v); err != nil {
			return err
		}
		b = b[m:]
	}
	return nil
}

// appendBytesField appends one length-delimited protobuf field.
func appendBytesField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
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
			b = appendText(b, a)
			b = c.Tokens[a].appendWritable(b)
		}
		b = appendVLong(b, int64(len(secretAliases)))
		for _, a := range secretAliases {
			b = appendText(b, a)
			b = appendText(b, string(c.Secrets[a]))
		}
		return b, nil
	case FormatProtobuf:
		var body []byte
		for _, a := range tokenAliases {
			t := c.Tokens[a]
			var tb []byte
			tb = appendBytesField(tb, fieldTokIdent, t.Identifier)
			tb = appendBytesField(tb, fieldTokPassword, t.Password)
			tb = appendBytesField(tb, fieldTokKind, []byte(t.Kind))
			tb = appendBytesField(tb, fieldTokService, []byte(t.Service))
			kv := appendBytesField(nil, fieldKVAlias, []byte(a))
			kv = appendBytesField(kv, fieldKVToken, tb)
			body = appendBytesField(body, fieldCredTokens, kv)
		}
		for _, a := range secretAliases {
			kv := appendBytesField(nil, fieldKVAlias, []byte(a))
			kv = appendBytesField(kv, fieldKVSecret, c.Secrets[a])
			body = appendBytesField(body, fieldCredSecrets, kv)
		}
		b = protowire.AppendVarint(b, uint64(len(body)))
		return append(b, body...), nil
	}
	return nil, fmt.Errorf("unknown token file format %d", format)
}

// MaxTokenFileSize bounds a token storage file (a container's holds a few tokens of a few hundred
// bytes each; a delegation-token-heavy one stays far below this).
const MaxTokenFileSize = 16 << 20

// ReadTokenFile reads a Hadoop token storage file, such as the one named by
// $HADOOP_TOKEN_FILE_LOCATION in a YARN container. Only a regular file of at most
// MaxTokenFileSize bytes is read (a FIFO or a device is refused without blocking); errors never
// quote the file's bytes.
func ReadTokenFile(path string) (*Credentials, error) {
	b, err := boundedfile.Read(path, MaxTokenFileSize)
	if err != nil {
		return nil, fmt.Errorf("read token file: %w", err)
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
		return nil, fmt.Errorf("$%s is not set; an ApplicationMaster started by YARN has it", EnvTokenFile)
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
		return fmt.Errorf("write token file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		return fmt.Errorf("write token file: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return fmt.Errorf("write token file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write token file %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write token file: %w", err)
	}
	return nil
}

// reader decodes Hadoop Writable primitives.
type reader struct {
	b   []byte
	off int
	// base is the offset of b in the input (for messages); bad is the sentinel errors wrap
	// (ErrBadTokenFile when nil).
	base int
	bad  error
}

func (r *reader) fail(what, why string) error {
	bad := r.bad
	if bad == nil {
		bad = ErrBadTokenFile
	}
	return fmt.Errorf("%w: %s at offset %d: %s", bad, what, r.base+r.off, why)
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
