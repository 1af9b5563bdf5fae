// Package amkerberos is the ApplicationMaster's Kerberos: the am.TokenRefresher of a job whose
// keytab was shipped to the AM container (submit --ship-keytab). It logs in with the keytab
// (gokrb5 logs in again by itself when the ticket expires), asks the NameNode for fresh HDFS
// delegation tokens before the current ones expire, and publishes them on the staging directory
// for the ranks (am.TokenXAttr). Only the full yarn-er binary's `yarn-er am` links it: the small
// AM binary carries no Kerberos library, and submit stages the full binary for such jobs.
package amkerberos

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/am"
	"github.com/yarn-er/yarn-er/internal/ipc/gss"
	"github.com/yarn-er/yarn-er/internal/namenode"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/kerberos"
	"github.com/yarn-er/yarn-er/records"
)

// DefaultRenewInterval is Hadoop's dfs.namenode.delegation.token.renew-interval: how long a new
// token lives unless renewed, assumed when the NameNode does not say.
const DefaultRenewInterval = 24 * time.Hour

// Refresher fetches fresh HDFS delegation tokens with the shipped keytab's login.
type Refresher struct {
	spec    *jobspec.TokenRefresh
	nn      string   // the staging directory's URL's host: the NameNode's host:port, or an HA nameservice
	addrs   []string // the NameNodes' RPC addresses (nn, or the nameservice's NameNodes)
	dir     string   // the staging directory's path
	krb     *gss.Kerberos
	renewer string
	log     *slog.Logger
	now     func() time.Time
}

// Options configure New.
type Options struct {
	// Getenv reads the environment (KRB5_CONFIG when the spec ships no krb5.conf); default
	// os.Getenv.
	Getenv func(string) string
	// Logger receives what happened (never a token or key). Default: discard.
	Logger *slog.Logger
	// LookupAddr names an IP address for _HOST (tests); default the system resolver.
	LookupAddr func(ctx context.Context, addr string) ([]string, error)
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// New logs in as spec.Tokens says, with the keytab in the working directory. It does not contact
// the KDC yet.
func New(spec *jobspec.Spec, o Options) (*Refresher, error) {
	t := spec.Tokens
	if t == nil {
		return nil, fmt.Errorf("amkerberos: the job spec asks for no token refresh")
	}
	u, err := url.Parse(spec.StagingDir)
	if err != nil || u.Scheme != "hdfs" || u.Host == "" {
		return nil, fmt.Errorf("amkerberos: staging directory %q: fresh tokens are for an hdfs:// staging directory", spec.StagingDir)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	addrs, err := am.StagingNameNodes(u, spec.StagingNameNodes)
	if err != nil {
		return nil, fmt.Errorf("amkerberos: %w", err)
	}
	cl, err := kerberos.Login(kerberos.Options{Principal: t.Principal, Keytab: t.KeytabFile, Krb5Conf: t.Krb5ConfFile}, o.Getenv, o.Logger)
	if err != nil {
		return nil, fmt.Errorf("amkerberos: log in with the shipped keytab: %w", err)
	}
	return &Refresher{
		spec: t, nn: u.Host, addrs: addrs, dir: path.Clean(u.Path), log: o.Logger, now: o.Now,
		krb:     &gss.Kerberos{Client: cl, ServicePrincipal: t.NameNodePrincipal, LookupAddr: o.LookupAddr},
		renewer: ShortName(t.Principal),
	}, nil
}

// ShortName is the user a NameNode maps a principal to by default (auth_to_local's DEFAULT rule
// for the NameNode's own realm): its first component. A token's renewer must be this name for its
// owner to renew it.
func ShortName(principal string) string {
	p, _, _ := strings.Cut(principal, "@")
	p, _, _ = strings.Cut(p, "/")
	return p
}

// Refresh asks the NameNode for a new HDFS delegation token in place of the one among current
// for the staging directory's NameNode (same alias and service), and says to call again when
// a third of its life is over, so that the token a rank's program read last still has more than
// half its life left (less the followers' poll) when the program uses it. Its life is what
// renewing it once reports (the renewal interval); when the NameNode refuses that renewal (the
// principal maps to another short name), the spec's renewal interval.
func (r *Refresher) Refresh(ctx context.Context, current *records.Credentials) (map[string]records.Token, time.Time, error) {
	old, ok := namenode.SelectToken(ctx, current.Tokens, r.nn)
	if !ok {
		return nil, time.Time{}, fmt.Errorf("amkerberos: the application holds no HDFS delegation token for %s", r.nn)
	}
	alias := ""
	for a, t := range current.Tokens {
		if t.Kind == old.Kind && t.Service == old.Service && bytes.Equal(t.Identifier, old.Identifier) {
			alias = a
			break
		}
	}
	cfg := namenode.Config{Addrs: r.addrs, Kerberos: r.krb, Service: old.Service, Logger: r.log}
	start := r.now()
	tok, err := namenode.GetDelegationToken(ctx, cfg, r.renewer)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("amkerberos: a fresh HDFS delegation token from %s: %w", r.nn, err)
	}
	life := DefaultRenewInterval
	if r.spec.RenewIntervalMillis > 0 {
		life = time.Duration(r.spec.RenewIntervalMillis) * time.Millisecond
	}
	if exp, err := namenode.RenewDelegationToken(ctx, cfg, tok); err != nil {
		r.log.Debug("amkerberos: the fresh token's expiry is not known; assuming the renewal interval", "err", err, "interval", life)
	} else if d := exp.Sub(start); d > 0 {
		life = d
	}
	return map[string]records.Token{alias: tok}, start.Add(life / 3), nil
}

// Publish sets the staging directory's am.TokenXAttr to the tokens (Hadoop's token storage
// format), for the ranks' `yarn-er tokens follow`.
func (r *Refresher) Publish(ctx context.Context, tokens *records.Credentials) error {
	b, err := tokens.WithoutKinds(records.KindAMRMToken).Marshal(records.FormatWritable)
	if err != nil {
		return err
	}
	c, err := namenode.Dial(ctx, namenode.Config{Addrs: r.addrs, Kerberos: r.krb, Logger: r.log})
	if err != nil {
		return fmt.Errorf("amkerberos: publish the fresh tokens: %w", err)
	}
	defer c.Close()
	if err := c.SetXAttr(ctx, r.dir, am.TokenXAttr, b); err != nil {
		return fmt.Errorf("amkerberos: publish the fresh tokens: %w", err)
	}
	return nil
}

var _ am.TokenRefresher = (*Refresher)(nil)
