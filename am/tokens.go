package am

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/yarn-er/yarn-er/internal/namenode"
	"github.com/yarn-er/yarn-er/jobspec"
	"github.com/yarn-er/yarn-er/records"
)

// Fresh tokens for long-running applications (submit --ship-keytab; docs/kerberos.md).
//
// An HDFS delegation token lives at most dfs.namenode.delegation.token.max-lifetime (7 days by
// default); the ResourceManager renews the one of the submission until then and no longer. For a
// job that runs longer, the ApplicationMaster logs in with the keytab shipped to its container
// (alone: the ranks never get it) and, through a TokenRefresher, fetches new tokens before the
// current ones expire. It puts them in the credentials of every container it starts from then on,
// and publishes them for the running ranks as the extended attribute user.yarn-er.tokens of the
// staging directory: a value held by the NameNode alone, which a rank reads with the token it
// already has. In each rank a `yarn-er tokens follow` process, started beside the program by the
// launch command, reads it and replaces the container's token file ($HADOOP_TOKEN_FILE_LOCATION)
// with the fresh tokens, renaming a complete file into place. The contract for the program: a
// long-running Hadoop client re-reads that file (Java: UserGroupInformation.getCurrentUser()
// .addCredentials(Credentials.readTokenStorageFile(file, conf))) at least once per renewal
// interval, as Spark's executors do with the tokens their driver sends.

// TokenXAttr is the name, in HDFS's user namespace, of the staging directory's extended attribute
// that holds the fresh tokens: the tokens alone (no AMRMToken), in Hadoop's token storage format.
const TokenXAttr = "yarn-er.tokens"

// TokensLog is the file in a rank's log directory where `yarn-er tokens follow` writes.
const TokensLog = "yarn-er-tokens.log"

// TokenRefresher obtains fresh HDFS delegation tokens and publishes them; the full yarn-er
// binary's `yarn-er am` supplies one (it logs in with the shipped keytab), the small AM binary
// has none.
type TokenRefresher interface {
	// Refresh returns new tokens, each under the alias of the token it replaces in current, and
	// when it should be called again.
	Refresh(ctx context.Context, current *records.Credentials) (tokens map[string]records.Token, next time.Time, err error)
	// Publish hands the fresh tokens to the running ranks (TokenXAttr of the staging directory).
	Publish(ctx context.Context, tokens *records.Credentials) error
}

// ErrNoTokenRefresher: the job asks for fresh tokens and this AM cannot log in with Kerberos.
var ErrNoTokenRefresher = errors.New("am: the job asks the ApplicationMaster to refresh its HDFS tokens (submit --ship-keytab), and this AM binary cannot log in with Kerberos")

// Retry intervals of a failed refresh: from the first to the longest.
const (
	refreshRetryFirst = 10 * time.Second
	refreshRetryMax   = 5 * time.Minute
)

// refreshTokens refreshes the application's tokens until ctx ends: at once, then when the
// refresher says, retrying failures with a growing pause (never past the next due time).
func (r *runner) refreshTokens(ctx context.Context) {
	retry := refreshRetryFirst
	wait := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		toks, next, err := r.opts.Tokens.Refresh(ctx, r.rm.Credentials())
		if err == nil {
			r.rm.UpdateTokens(toks)
			r.credsNow.Store(r.rm.Credentials())
			fresh := records.NewCredentials()
			for alias, t := range toks {
				fresh.AddToken(alias, t)
			}
			err = r.opts.Tokens.Publish(ctx, fresh)
			if err == nil {
				wait = max(time.Until(next), time.Second)
				retry = refreshRetryFirst
				r.log.Info("am: HDFS delegation tokens refreshed", "tokens", len(toks), "next", next.UTC().Format(time.RFC3339))
				continue
			}
		}
		if ctx.Err() != nil {
			return
		}
		r.log.Warn("am: refreshing the HDFS delegation tokens failed; trying again", "err", err, "in", retry)
		wait = retry
		retry = min(2*retry, refreshRetryMax)
	}
}

// TokenPollInterval is how often a rank's `yarn-er tokens follow` reads the published tokens:
// an eighth of the renewal interval (a day when unknown), from 2 seconds to 10 minutes. The AM
// replaces the tokens when a third of their life is over, so a rank has five reads or more before
// the token it holds expires, and the token file it reads has more than half of its token's life
// left, less one poll.
func TokenPollInterval(t *jobspec.TokenRefresh) time.Duration {
	renew := 24 * time.Hour
	if t != nil && t.RenewIntervalMillis > 0 {
		renew = time.Duration(t.RenewIntervalMillis) * time.Millisecond
	}
	return min(max(renew/8, 2*time.Second), 10*time.Minute)
}

// tokenFollowerWords are the launch command's words that start `yarn-er tokens follow` beside
// the rank's program (none when the job does not refresh its tokens). They come first, ending in
// "&": the process runs in the background while the rest of the command runs, and ends when the
// launch shell (whose pid the program keeps through exec) is gone.
func (r *runner) tokenFollowerWords() []string {
	if r.spec.Tokens == nil {
		return nil
	}
	words := []string{"./" + jobspec.BinaryName, "tokens", "follow", "--log-level", "info",
		"--dir", launchQuote(r.spec.StagingDir)}
	if len(r.spec.StagingNameNodes) > 0 {
		words = append(words, "--namenodes", launchQuote(strings.Join(r.spec.StagingNameNodes, ",")))
	}
	return append(words,
		"--every", TokenPollInterval(r.spec.Tokens).String(),
		"--parent", `\$\$`,
		"</dev/null", ">/dev/null", "2><LOG_DIR>/"+TokensLog, "&")
}

// FollowOptions configure FollowTokens.
type FollowOptions struct {
	// Dir is the application's staging directory (hdfs://namenode:port/path), whose TokenXAttr
	// holds the fresh tokens.
	Dir string
	// NameNodes are the NameNodes of the nameservice Dir names (jobspec.Spec.StagingNameNodes;
	// empty: Dir names its NameNode).
	NameNodes []string
	// TokenFile is the container's token file ($HADOOP_TOKEN_FILE_LOCATION), read for the token
	// to reach the NameNode with and replaced by one with the fresh tokens.
	TokenFile string
	// Every is the interval between reads (default TokenPollInterval(nil)).
	Every time.Duration
	// Parent, when positive, is a process whose end ends FollowTokens.
	Parent int
	// Logger receives what happened (never token bytes). Default: discard.
	Logger *slog.Logger
}

// FollowTokens reads the tokens the ApplicationMaster publishes and puts them into the token
// file whenever they differ from those it holds, until ctx ends or the parent process is gone
// (then it returns nil). A failed read is logged and tried again at the next interval.
func FollowTokens(ctx context.Context, o FollowOptions) error {
	u, err := url.Parse(o.Dir)
	if err != nil || u.Scheme != "hdfs" || u.Host == "" || u.Path == "" {
		return fmt.Errorf("tokens follow: --dir %q: want the staging directory's hdfs://namenode:port/path", o.Dir)
	}
	addrs, err := StagingNameNodes(u, o.NameNodes)
	if err != nil {
		return fmt.Errorf("tokens follow: --dir %q: %w (fix: --namenodes host:port,...)", o.Dir, err)
	}
	if o.TokenFile == "" {
		return fmt.Errorf("tokens follow: no token file: $%s is not set", records.EnvTokenFile)
	}
	if o.Every <= 0 {
		o.Every = TokenPollInterval(nil)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := path.Clean(u.Path)
	tick := time.NewTicker(o.Every)
	defer tick.Stop()
	for {
		if o.Parent > 0 && !alive(o.Parent) {
			log.Info("tokens follow: the rank ended")
			return nil
		}
		switch changed, err := followOnce(ctx, u.Host, addrs, dir, o.TokenFile); {
		case err != nil:
			log.Warn("tokens follow: reading the published tokens failed; trying again", "err", err, "in", o.Every)
		case changed:
			log.Info("tokens follow: fresh tokens written", "file", o.TokenFile)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// followOnce reads the published tokens once, and writes the token file if they are new.
// nn is the staging URL's host (the token's service names it), addrs its NameNodes' addresses.
func followOnce(ctx context.Context, nn string, addrs []string, dir, tokenFile string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	creds, err := records.ReadTokenFile(tokenFile)
	if err != nil {
		return false, err
	}
	c, err := namenode.Dial(ctx, namenode.Config{Addrs: addrs, TokenFunc: func() (records.Token, error) {
		if t, ok := namenode.SelectToken(ctx, creds.Tokens, nn); ok {
			return t, nil
		}
		return records.Token{}, fmt.Errorf("the token file holds no HDFS delegation token for %s", nn)
	}})
	if err != nil {
		return false, err
	}
	defer c.Close()
	v, ok, err := c.GetXAttr(ctx, dir, TokenXAttr)
	if err != nil || !ok {
		return false, err
	}
	fresh, err := records.ParseCredentials(v)
	if err != nil {
		return false, fmt.Errorf("the published tokens (%s of %s): %w", TokenXAttr, dir, err)
	}
	merged, changed := mergeTokens(creds, fresh)
	if !changed {
		return false, nil
	}
	return true, records.WriteTokenFile(tokenFile, merged, creds.Format)
}

// mergeTokens returns creds with fresh's tokens in place of those of the same aliases, and
// whether anything changed.
func mergeTokens(creds, fresh *records.Credentials) (*records.Credentials, bool) {
	out := creds.WithoutKinds()
	changed := false
	for alias, t := range fresh.Tokens {
		if t.Kind == records.KindAMRMToken {
			continue
		}
		if old, ok := out.Tokens[alias]; ok && bytes.Equal(old.Identifier, t.Identifier) && bytes.Equal(old.Password, t.Password) &&
			old.Kind == t.Kind && old.Service == t.Service {
			continue
		}
		out.Tokens[alias] = t.Clone()
		changed = true
	}
	return out, changed
}

// alive reports whether process pid exists (signal 0; a process of another user counts).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
