package yarn

import (
	"fmt"
	"os/user"
	"strings"
)

// staticUser is Hadoop's default hadoop.http.staticuser.user: the identity of anonymous requests.
const staticUser = "dr.who"

// resolveAuth picks the authentication scheme for opts.
func resolveAuth(opts Options) (AuthMethod, error) {
	switch opts.Auth {
	case AuthSimple, AuthKerberos:
		return opts.Auth, nil
	case AuthAuto:
		if opts.Kerberos.Keytab != "" || opts.Kerberos.CCache != "" || opts.Kerberos.Client != nil {
			return AuthKerberos, nil
		}
		return AuthSimple, nil
	}
	return "", fmt.Errorf("authentication %q: want simple or kerberos", opts.Auth)
}

// resolveUser finds the user for simple authentication: the option, then $HADOOP_USER_NAME (as
// Hadoop's UserGroupInformation), then the operating-system user. It never returns "".
func resolveUser(explicit string, getenv func(string) string) (name, from string, err error) {
	if u := strings.TrimSpace(explicit); u != "" {
		return u, "option", nil
	}
	if u := strings.TrimSpace(getenv("HADOOP_USER_NAME")); u != "" {
		return u, "$HADOOP_USER_NAME", nil
	}
	cur, err := user.Current()
	if err == nil && strings.TrimSpace(cur.Username) != "" {
		return cur.Username, "operating-system user", nil
	}
	cause := "the operating system reports no user name"
	if err != nil {
		cause = err.Error()
	}
	return "", "", fmt.Errorf("%w: cannot determine the user name for simple authentication: %s (fix: pass a user or set HADOOP_USER_NAME)",
		ErrAuthentication, cause)
}
