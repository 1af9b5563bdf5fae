package submit

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/yarn-er/yarn-er/stage"
	"github.com/yarn-er/yarn-er/yarn"
)

// ErrProxyUser: the ResourceManager or HDFS refused to let the login act as the proxy user of
// --do-as (hadoop.proxyuser.<login>.* do not allow it). An error matching it matches an
// authentication error too (exit code 4).
var ErrProxyUser = stage.ErrProxyUser

// loginUser is the user the submission authenticates as: the Kerberos login's short name, else
// the simple user.
func (c *Client) loginUser() string {
	if k := c.opts.Stage.Kerberos; k != nil && k.Credentials != nil {
		short, _, _ := strings.Cut(k.Credentials.UserName(), "/")
		return short
	}
	if c.opts.YARN != nil {
		if k := c.opts.YARN.KerberosClient(); k != nil && k.Credentials != nil {
			short, _, _ := strings.Cut(k.Credentials.UserName(), "/")
			return short
		}
	}
	if p := strings.TrimSpace(c.opts.Login.Principal); p != "" {
		short, _, _ := strings.Cut(p, "@")
		short, _, _ = strings.Cut(short, "/")
		return short
	}
	if c.opts.YARN != nil {
		return c.opts.YARN.User()
	}
	return c.opts.Stage.User
}

// proxyRefusal returns the error for the ResourceManager's refusal of the proxy user (--do-as),
// naming the rights to give; nil when err is not one.
func (c *Client) proxyRefusal(err error) error {
	doAs := c.opts.Stage.DoAs
	if doAs == "" || doAs == c.loginUser() || !yarn.IsAuthError(err) {
		return nil
	}
	if !strings.Contains(err.Error(), "impersonate") && !errors.Is(err, yarn.ErrForbidden) {
		return nil
	}
	login := c.loginUser()
	return fmt.Errorf("%w by the ResourceManager: it does not let %s act as %s: %w (fix: %s)", ErrProxyUser, login, doAs, err,
		stage.ProxyUserFix(login, doAs))
}

// checkAppUser checks, with --do-as, that the ResourceManager made the application the proxy
// user's: an RM that ignores ?doAs= (a REST API without a proxy-user filter in front of it)
// makes it the login's, whose containers would then run with the login's identity on another
// user's staging directory. Such an application is killed at once, and the
// error says why (the caller then removes the staging directory and cancels the token).
func (c *Client) checkAppUser(ctx context.Context, appID string) error {
	doAs := c.opts.Stage.DoAs
	if doAs == "" || doAs == c.loginUser() {
		return nil
	}
	app, err := c.opts.YARN.App(ctx, appID)
	if err != nil || app == nil || app.User == "" || app.User == doAs {
		// Not known: the submission stands (the RM has it; the user shows in app status).
		return nil
	}
	if _, _, kerr := c.opts.YARN.KillApplication(context.WithoutCancel(ctx), appID); kerr != nil {
		c.log.Warn("could not kill the application the ResourceManager made the login's", "app", appID, "err", kerr)
	}
	return fmt.Errorf("%w by the ResourceManager: it ignored ?doAs=%s and made %s %s's, so it was killed (fix: give the ResourceManager's web endpoint a filter that takes doAs, Hadoop's ProxyUserAuthenticationFilterInitializer or, with Kerberos, its delegation-token filter (yarn.resourcemanager.webapp.delegation-token-auth-filter.enabled); or submit as %s without --do-as)",
		ErrProxyUser, doAs, appID, app.User, doAs)
}
