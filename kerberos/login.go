package kerberos

import (
	"errors"
	"fmt"
	"io/fs"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	krb5client "github.com/jcmturner/gokrb5/v8/client"
	krb5config "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/yarn-er/yarn-er/internal/boundedfile"
	"github.com/yarn-er/yarn-er/internal/redact"
)

// ErrAuthentication is what every login error wraps: there is no Kerberos identity to act as
// (no ticket, a damaged file, a keytab without the principal). The REST client's
// yarn.ErrAuthentication is the same error value.
var ErrAuthentication = errors.New("authentication failed")

// Options say how to log in.
type Options struct {
	// Principal is the client principal, "user@REALM" (or "user", with the default realm of
	// krb5.conf). Required with Keytab.
	Principal string
	// Keytab is a keytab file to log in with. A keytab client can log in again when its ticket
	// expires; prefer it for long-running processes.
	Keytab string
	// CCache is a credential cache file (from kinit). Empty, without Keytab: $KRB5CCNAME (FILE:
	// caches only), then /tmp/krb5cc_<uid>.
	CCache string
	// Krb5Conf is the krb5.conf path. Empty: $KRB5_CONFIG, then /etc/krb5.conf.
	Krb5Conf string
	// DisablePAFXFAST turns off PA-FX-FAST pre-authentication, which Active Directory KDCs often
	// need.
	DisablePAFXFAST bool
	// Client, when set, is a ready gokrb5 client (for programs that manage their own Kerberos
	// login); the fields above are then ignored.
	Client *krb5client.Client
}

// Set reports whether the options name a login of their own (a keytab, a credential cache or a
// client); without one, Login uses the default credential cache.
func (o Options) Set() bool { return o.Keytab != "" || o.CCache != "" || o.Client != nil }

// Login builds the gokrb5 client of the options: a keytab's (which logs in again by itself when
// its ticket expires) or a credential cache's, with krb5.conf from the options, $KRB5_CONFIG or
// /etc/krb5.conf; files are read within size limits, parser panics recovered, and no secret
// reaches an error or the log. It does not contact the KDC: a keytab client logs in on its first
// use. opts.Client, when set, is returned as it is. getenv defaults to os.Getenv, logger to a
// discarding one. Every error wraps ErrAuthentication and says how to fix it.
func Login(opts Options, getenv func(string) string, logger *slog.Logger) (*krb5client.Client, error) {
	if opts.Client != nil {
		return opts.Client, nil
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return login(opts, getenv, logger)
}

func login(o Options, getenv func(string) string, logger *slog.Logger) (*krb5client.Client, error) {
	cfgPath := o.Krb5Conf
	if cfgPath == "" {
		for _, p := range filepath.SplitList(getenv("KRB5_CONFIG")) {
			if _, err := os.Stat(p); err == nil {
				cfgPath = p
				break
			}
		}
	}
	if cfgPath == "" {
		cfgPath = "/etc/krb5.conf"
	}
	cfg, err := loadKrb5Conf(cfgPath)
	if err != nil {
		return nil, err
	}
	settings := []func(*krb5client.Settings){
		krb5client.DisablePAFXFAST(o.DisablePAFXFAST),
		krb5client.Logger(log.New(redactingWriter{logger: logger, component: "gokrb5"}, "", 0)),
	}
	if o.Keytab != "" {
		kt, err := loadKeytab(o.Keytab)
		if err != nil {
			return nil, err
		}
		user, realm, err := splitPrincipal(o.Principal, cfg.LibDefaults.DefaultRealm)
		if err != nil {
			return nil, err
		}
		if err := keytabHolds(kt, o.Keytab, user, realm); err != nil {
			return nil, err
		}
		return krb5client.NewWithKeytab(user, realm, kt, cfg, settings...), nil
	}
	path, err := ccachePath(o.CCache, getenv)
	if err != nil {
		return nil, err
	}
	cc, err := loadCCache(path)
	if err != nil {
		return nil, err
	}
	cl, err := krb5client.NewFromCCache(cc, cfg, settings...)
	if err != nil {
		return nil, fmt.Errorf("%w: credential cache %s: %s (fix: run kinit, or use a keytab)", ErrAuthentication, path, redact.Text(err.Error()))
	}
	return cl, nil
}

// Limits on the Kerberos files read: a keytab holds a few keys, a credential cache a few tickets.
const (
	maxKeytabBytes   = 1 << 20
	maxCCacheBytes   = 4 << 20
	maxKrb5ConfBytes = 1 << 20
)

// parseSafely runs a parser of a user's file from a third-party library, turning a panic into an
// error: gokrb5's credential cache reader slices past the end of damaged files.
func parseSafely(parse func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the parser failed on it (%v)", r)
		}
	}()
	return parse()
}

// loadKeytab reads and parses a keytab, within a size limit and without a panic. gokrb5's errors
// quote the bytes they failed on (principal and keys), so they are never repeated: the error only
// says that the file is damaged.
func loadKeytab(path string) (*keytab.Keytab, error) {
	data, err := readUserFile(path, maxKeytabBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: keytab: %w (fix: give a readable keytab, e.g. from ktutil or kadmin ktadd)", ErrAuthentication, err)
	}
	kt := keytab.New()
	if err := parseSafely(func() error { return kt.Unmarshal(data) }); err != nil {
		return nil, fmt.Errorf("%w: keytab %s (%d bytes) is damaged or not a keytab (fix: export it again with ktutil or kadmin ktadd; check it with klist -k %s)",
			ErrAuthentication, path, len(data), path)
	}
	return kt, nil
}

// loadCCache reads and parses a credential cache, within a size limit and without a panic.
func loadCCache(path string) (*credentials.CCache, error) {
	data, err := readUserFile(path, maxCCacheBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: credential cache: %w (fix: run kinit, or use a keytab)", ErrAuthentication, err)
	}
	cc := new(credentials.CCache)
	if err := parseSafely(func() error { return cc.Unmarshal(data) }); err != nil {
		return nil, fmt.Errorf("%w: credential cache %s (%d bytes) is damaged or not a credential cache (fix: kdestroy and kinit again, or use a keytab)",
			ErrAuthentication, path, len(data))
	}
	return cc, nil
}

// loadKrb5Conf reads and parses krb5.conf, within a size limit and without a panic.
func loadKrb5Conf(path string) (*krb5config.Config, error) {
	const fix = "point KRB5_CONFIG or the krb5.conf option at a valid krb5.conf"
	data, err := readUserFile(path, maxKrb5ConfBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: Kerberos configuration: %w (fix: %s)", ErrAuthentication, err, fix)
	}
	var cfg *krb5config.Config
	if err := parseSafely(func() error {
		var perr error
		cfg, perr = krb5config.NewFromString(string(data))
		return perr
	}); err != nil {
		return nil, fmt.Errorf("%w: Kerberos configuration %s: %s (fix: %s)", ErrAuthentication, path, redact.Text(err.Error()), fix)
	}
	return cfg, nil
}

// keytabHolds checks that the keytab has a key of user@realm, naming the principals it has when
// not (principal names are not secret; the keys are never shown).
func keytabHolds(kt *keytab.Keytab, path, user, realm string) error {
	var have []string
	seen := map[string]bool{}
	for _, e := range kt.Entries {
		name := strings.Join(e.Principal.Components, "/")
		if name == user && e.Principal.Realm == realm {
			return nil
		}
		if p := name + "@" + e.Principal.Realm; !seen[p] && len(have) < 8 {
			seen[p] = true
			have = append(have, p)
		}
	}
	held := "it holds no key at all"
	if len(have) > 0 {
		held = "only of " + strings.Join(have, ", ")
	}
	return fmt.Errorf("%w: the keytab %s holds no key of %s@%s, %s (fix: give the keytab of %s@%s, or the principal of this keytab with --principal or YARN_ER_PRINCIPAL)",
		ErrAuthentication, path, user, realm, redact.Text(held), user, realm)
}

// splitPrincipal splits "user@REALM" (or "user", with the default realm).
func splitPrincipal(p, defaultRealm string) (user, realm string, err error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", "", fmt.Errorf("%w: a keytab needs a principal (fix: give the principal, e.g. flink@EXAMPLE.COM)", ErrAuthentication)
	}
	user, realm = p, defaultRealm
	if i := strings.LastIndexByte(p, '@'); i >= 0 {
		user, realm = p[:i], p[i+1:]
	}
	if user == "" || realm == "" {
		return "", "", fmt.Errorf("%w: principal %q has no realm and krb5.conf names no default_realm (fix: write user@REALM)", ErrAuthentication, p)
	}
	return user, realm, nil
}

// ccachePath finds the credential cache: the option, $KRB5CCNAME (FILE: caches only), then
// /tmp/krb5cc_<uid> as MIT Kerberos does.
func ccachePath(explicit string, getenv func(string) string) (string, error) {
	if explicit != "" {
		return strings.TrimPrefix(explicit, "FILE:"), nil
	}
	if env := getenv("KRB5CCNAME"); env != "" {
		if i := strings.IndexByte(env, ':'); i > 0 && !strings.HasPrefix(env, "FILE:") {
			return "", fmt.Errorf("%w: KRB5CCNAME=%s is a %s cache, which cannot be read (fix: KRB5CCNAME=FILE:/tmp/krb5cc_$(id -u) kinit, or use a keytab)",
				ErrAuthentication, env, env[:i])
		}
		return strings.TrimPrefix(env, "FILE:"), nil
	}
	return filepath.Join(os.TempDir(), "krb5cc_"+strconv.Itoa(os.Getuid())), nil
}

// readUserFile reads a file the user named (keytab, credential cache, krb5.conf): a regular file
// within max bytes, never blocking on a FIFO; the error names the path and never quotes the
// file's bytes.
func readUserFile(path string, max int64) ([]byte, error) {
	data, err := boundedfile.Read(path, max)
	var pe *fs.PathError
	if err != nil && !errors.As(err, &pe) {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return data, err
}

// redactingWriter turns the lines gokrb5 writes to a *log.Logger into scrubbed debug records.
type redactingWriter struct {
	logger    *slog.Logger
	component string
}

func (w redactingWriter) Write(p []byte) (int, error) {
	w.logger.Debug(redact.Text(strings.TrimRight(string(p), "\n")), "component", w.component)
	return len(p), nil
}
