package ipc

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// maxDigestChallenge bounds a DIGEST-MD5 challenge (RFC 2831 says less than 2048 bytes).
const maxDigestChallenge = 64 << 10

// DigestChallenge is a parsed DIGEST-MD5 challenge (RFC 2831 section 2.1.1).
type DigestChallenge struct {
	Realms    []string
	Nonce     string
	QOP       []string // offered qop values; "auth" when the server sent none
	Charset   string
	Algorithm string
	Ciphers   []string
	MaxBuf    string
	Stale     bool
}

// ParseDigestChallenge parses a DIGEST-MD5 challenge.
func ParseDigestChallenge(b []byte) (*DigestChallenge, error) {
	if len(b) > maxDigestChallenge {
		return nil, fmt.Errorf("DIGEST-MD5 challenge of %d bytes is too long", len(b))
	}
	dirs, err := ParseDigestDirectives(string(b))
	if err != nil {
		return nil, err
	}
	c := &DigestChallenge{}
	// The directives that fill a field with their value as sent, or split as a list.
	text := map[string]*string{"nonce": &c.Nonce, "charset": &c.Charset, "algorithm": &c.Algorithm, "maxbuf": &c.MaxBuf}
	lists := map[string]*[]string{"qop": &c.QOP, "cipher": &c.Ciphers}
	seen := map[string]bool{}
	for _, d := range dirs {
		k := strings.ToLower(d.Key)
		if k != "realm" && seen[k] {
			return nil, fmt.Errorf("DIGEST-MD5 challenge repeats %q", d.Key)
		}
		seen[k] = true
		switch {
		case k == "realm":
			c.Realms = append(c.Realms, d.Value)
		case k == "stale":
			c.Stale = strings.EqualFold(d.Value, "true")
		case text[k] != nil:
			*text[k] = d.Value
		case lists[k] != nil:
			*lists[k] = splitList(d.Value)
		}
	}
	if c.Nonce == "" {
		return nil, errors.New("DIGEST-MD5 challenge has no nonce")
	}
	if !strings.EqualFold(c.Algorithm, "md5-sess") {
		return nil, fmt.Errorf("DIGEST-MD5 challenge has algorithm %q, want md5-sess", c.Algorithm)
	}
	if c.Charset != "" && !strings.EqualFold(c.Charset, "utf-8") {
		return nil, fmt.Errorf("DIGEST-MD5 challenge has charset %q, want utf-8", c.Charset)
	}
	if len(c.QOP) == 0 {
		c.QOP = []string{"auth"}
	}
	if c.MaxBuf != "" {
		if n, err := strconv.Atoi(c.MaxBuf); err != nil || n <= digestOverhead || n > 1<<24 {
			return nil, fmt.Errorf("DIGEST-MD5 challenge has maxbuf %q, want a number of bytes from %d to %d", c.MaxBuf, digestOverhead+1, 1<<24)
		}
	}
	return c, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// DigestDirective is one key=value pair of a DIGEST-MD5 challenge or response.
type DigestDirective struct {
	Key, Value string
}

// ParseDigestDirectives splits "k1=v1,k2="quoted \"v2\"",..." into directives. Empty list
// elements and linear white space around them are allowed (RFC 2831's #rule).
func ParseDigestDirectives(s string) ([]DigestDirective, error) {
	var out []DigestDirective
	i := 0
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
			i++
		}
	}
	for {
		skipSpace()
		if i == len(s) {
			return out, nil
		}
		if s[i] == ',' {
			i++
			continue
		}
		start := i
		for i < len(s) && s[i] != '=' && s[i] != ',' && s[i] != ' ' && s[i] != '\t' && s[i] != '"' {
			i++
		}
		key := s[start:i]
		if key == "" {
			return nil, fmt.Errorf("DIGEST-MD5: expected a directive name at offset %d", start)
		}
		skipSpace()
		if i == len(s) || s[i] != '=' {
			return nil, fmt.Errorf("DIGEST-MD5: directive %q has no value", key)
		}
		i++
		skipSpace()
		var val strings.Builder
		if i < len(s) && s[i] == '"' {
			i++
			closed := false
			for i < len(s) {
				c := s[i]
				if c == '\\' && i+1 < len(s) {
					val.WriteByte(s[i+1])
					i += 2
					continue
				}
				if c == '"' {
					i++
					closed = true
					break
				}
				val.WriteByte(c)
				i++
			}
			if !closed {
				return nil, fmt.Errorf("DIGEST-MD5: unterminated quoted value of %q", key)
			}
		} else {
			start := i
			for i < len(s) && s[i] != ',' && s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n' {
				i++
			}
			val.WriteString(s[start:i])
		}
		out = append(out, DigestDirective{Key: key, Value: val.String()})
		skipSpace()
		if i < len(s) && s[i] != ',' {
			return nil, fmt.Errorf("DIGEST-MD5: expected ',' after %q at offset %d", key, i)
		}
	}
}

// The DIGEST-MD5 qop values: authentication only, with integrity protection, and with
// confidentiality (the security layers of hadoop.rpc.protection = authentication, integrity and
// privacy).
const (
	qopAuth     = "auth"
	qopAuthInt  = "auth-int"
	qopAuthConf = "auth-conf"
)

// digestCipherRC4 is the auth-conf cipher yarn-er speaks (RFC 2831's "rc4", 128-bit keys), one that
// every Java DIGEST-MD5 server offers; the block ciphers (3des, des) and the shortened RC4 keys are
// not.
const digestCipherRC4 = "rc4"

func orNone(list []string) string {
	if len(list) == 0 {
		return "(none)"
	}
	return strings.Join(list, ",")
}

// digestMD5 is the client side of one DIGEST-MD5 authentication with a Hadoop token.
type digestMD5 struct {
	username  string // base64(identifier)
	password  string // base64(password)
	digestURI string // protocol + "/" + serverId
	cnonce    string
	// from the last response
	realm, nonce, qop string
	response          string
	maxBuf            int // the server's maxbuf (0: RFC 2831's default)
}

func newDigestMD5(tok *Token, protocol, serverID string) *digestMD5 {
	return &digestMD5{
		username:  base64.StdEncoding.EncodeToString(tok.Identifier),
		password:  base64.StdEncoding.EncodeToString(tok.Password),
		digestURI: protocol + "/" + serverID,
	}
}

// respond computes the digest-response to a challenge: qop auth when the server offers it, else
// auth-int (an integrity layer follows), else auth-conf with cipher rc4 (a confidentiality layer
// follows), else an ErrUnsupportedQOP.
func (d *digestMD5) respond(challenge []byte) ([]byte, error) {
	ch, err := ParseDigestChallenge(challenge)
	if err != nil {
		return nil, err
	}
	switch {
	case slices.Contains(ch.QOP, qopAuth):
		d.qop = qopAuth
	case slices.Contains(ch.QOP, qopAuthInt):
		d.qop = qopAuthInt
	case slices.Contains(ch.QOP, qopAuthConf) && slices.ContainsFunc(ch.Ciphers, func(c string) bool { return strings.EqualFold(c, digestCipherRC4) }):
		d.qop = qopAuthConf
	default:
		return nil, fmt.Errorf("%w: the server offers qop %s with ciphers %s; "+
			"yarn-er supports qop auth, auth-int and auth-conf with cipher rc4 (hadoop.rpc.protection=authentication, integrity or privacy)",
			ErrUnsupportedQOP, strings.Join(ch.QOP, ","), orNone(ch.Ciphers))
	}
	if ch.MaxBuf != "" {
		d.maxBuf, _ = strconv.Atoi(ch.MaxBuf) // checked by ParseDigestChallenge
	}
	if d.cnonce == "" {
		var rb [16]byte
		if _, err := rand.Read(rb[:]); err != nil {
			return nil, err
		}
		d.cnonce = hex.EncodeToString(rb[:])
	}
	if len(ch.Realms) > 0 {
		d.realm = ch.Realms[0]
	}
	d.nonce = ch.Nonce
	d.response = digestResponseValue(d.username, d.realm, d.password, d.nonce, d.cnonce, "00000001", d.qop,
		"AUTHENTICATE:"+d.digestURI+d.a2Suffix())
	var b strings.Builder
	if ch.Charset != "" {
		b.WriteString("charset=utf-8,")
	}
	fmt.Fprintf(&b, "username=%s,", quoteDigest(d.username))
	if len(ch.Realms) > 0 {
		fmt.Fprintf(&b, "realm=%s,", quoteDigest(d.realm))
	}
	fmt.Fprintf(&b, "nonce=%s,nc=00000001,cnonce=%s,digest-uri=%s,maxbuf=%d,response=%s,qop=%s",
		quoteDigest(d.nonce), quoteDigest(d.cnonce), quoteDigest(d.digestURI), ClientMaxBuffer, d.response, d.qop)
	if d.qop == qopAuthConf {
		b.WriteString(",cipher=" + digestCipherRC4)
	}
	return []byte(b.String()), nil
}

// a2Suffix is what RFC 2831 appends to A2 with a security layer (qop auth-int or auth-conf).
func (d *digestMD5) a2Suffix() string {
	if d.qop == qopAuth {
		return ""
	}
	return ":00000000000000000000000000000000"
}

// verify checks the server's "rspauth=<hex>" final message.
func (d *digestMD5) verify(token []byte) error {
	if d.response == "" {
		return errors.New("DIGEST-MD5: success before the client responded")
	}
	dirs, err := ParseDigestDirectives(string(token))
	if err != nil {
		return err
	}
	for _, dir := range dirs {
		if strings.EqualFold(dir.Key, "rspauth") {
			want := digestResponseValue(d.username, d.realm, d.password, d.nonce, d.cnonce, "00000001", d.qop,
				":"+d.digestURI+d.a2Suffix())
			if subtle.ConstantTimeCompare([]byte(strings.ToLower(dir.Value)), []byte(want)) != 1 {
				return errors.New("DIGEST-MD5: the server's rspauth does not match: it does not know the token's secret")
			}
			return nil
		}
	}
	return errors.New("DIGEST-MD5: the server's final message has no rspauth")
}

// digestResponseValue computes RFC 2831's response-value for md5-sess without authzid:
// HEX(MD5(HEX(H(A1)) ":" nonce ":" nc ":" cnonce ":" qop ":" HEX(MD5(A2)))) (see digestHA1).
func digestResponseValue(username, realm, password, nonce, cnonce, nc, qop, a2 string) string {
	ha1 := digestHA1(username, realm, password, nonce, cnonce)
	ha2 := md5.Sum([]byte(a2))
	kd := md5.Sum([]byte(hex.EncodeToString(ha1[:]) + ":" + nonce + ":" + nc + ":" + cnonce + ":" + qop + ":" +
		hex.EncodeToString(ha2[:])))
	return hex.EncodeToString(kd[:])
}

// digestHA1 is H(A1) for md5-sess without authzid: MD5(A1), where
// A1 = MD5(username ":" realm ":" password) ":" nonce ":" cnonce.
func digestHA1(username, realm, password, nonce, cnonce string) [md5.Size]byte {
	urp := md5.Sum([]byte(username + ":" + realm + ":" + password))
	return md5.Sum(append(urp[:], []byte(":"+nonce+":"+cnonce)...))
}

func quoteDigest(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}
