package kerberos

import (
	"regexp"
	"strconv"
	"strings"
)

// krbErrorCode finds the KDC's or a service's error code in a gokrb5 error text ("KRB Error: (6)
// KDC_ERR_C_PRINCIPAL_UNKNOWN ..."); 0 when there is none.
var krbErrorCode = regexp.MustCompile(`KRB Error: \((\d+)\)`)

// Kerberos error codes of RFC 4120 section 7.5.9 that users meet.
const (
	krbErrClientUnknown  = 6  // KDC_ERR_C_PRINCIPAL_UNKNOWN
	krbErrServiceUnknown = 7  // KDC_ERR_S_PRINCIPAL_UNKNOWN
	krbErrEtypeNoSupp    = 14 // KDC_ERR_ETYPE_NOSUPP
	krbErrClientRevoked  = 18 // KDC_ERR_CLIENT_REVOKED
	krbErrKeyExpired     = 23 // KDC_ERR_KEY_EXPIRED
	krbErrPreauthFailed  = 24 // KDC_ERR_PREAUTH_FAILED
	krbErrTicketExpired  = 32 // KRB_AP_ERR_TKT_EXPIRED
	krbErrSkew           = 37 // KRB_AP_ERR_SKEW
	krbErrModified       = 41 // KRB_AP_ERR_MODIFIED
)

// Explain turns a failed Kerberos exchange (the text of a gokrb5 error, a KDC's or a service's
// answer) into what went wrong and how to fix it, in words; ok is false when the text matches
// nothing known. client is the login's principal, spn the service principal asked for; either
// may be "".
func Explain(text, client, spn string) (what, fix string, ok bool) {
	if client == "" {
		client = "the login's principal"
	}
	if m := krbErrorCode.FindStringSubmatch(text); m != nil {
		code, _ := strconv.Atoi(m[1])
		switch code {
		case krbErrClientUnknown:
			return "the KDC does not know the principal " + client,
				"check the principal (--principal or YARN_ER_PRINCIPAL; klist -kt KEYTAB lists the keytab's) and its realm", true
		case krbErrServiceUnknown:
			return "the KDC does not know the service principal " + spn,
				"the principal is made from the host name yarn-er reaches the service by (_HOST): reach it by the name in its principal (the address in yarn-site.xml or --rm), or set the service principal (yarn.resourcemanager.webapp.spnego-principal)", true
		case krbErrEtypeNoSupp:
			return "the KDC and this client share no encryption type",
				"check permitted_enctypes and default_tkt_enctypes in krb5.conf against the keytab's keys (klist -ekt KEYTAB)", true
		case krbErrClientRevoked:
			return "the principal " + client + " is locked or disabled at the KDC", "ask the Kerberos administrators to unlock it", true
		case krbErrKeyExpired, krbErrPreauthFailed, krbErrModified:
			return "the KDC refused the key of " + client + " (a wrong password, or a keytab older than the principal's current key)",
				"export the keytab again (ktutil, kadmin ktadd) or kinit again", true
		case krbErrTicketExpired:
			return "the Kerberos ticket has expired", "kinit again, or log in with a keytab (--keytab, --principal), which renews by itself", true
		case krbErrSkew:
			return "this host's clock differs from the KDC's by more than the allowed skew (5 minutes by default)",
				"synchronise the clock (NTP) of this host with the KDC's", true
		}
	}
	lower := strings.ToLower(text)
	switch {
	case strings.Contains(lower, "no kdcs defined in configuration for realm"):
		realm := client
		if i := strings.LastIndexByte(client, '@'); i >= 0 {
			realm = client[i+1:]
		}
		return "krb5.conf names no KDC for the realm " + realm,
			"check the principal's realm (it is case-sensitive), or add the realm to [realms] of krb5.conf (KRB5_CONFIG)", true
	case strings.Contains(lower, "matching key not found in keytab") || strings.Contains(lower, "no key for principal") ||
		strings.Contains(lower, "could not get key from keytab"):
		return "the keytab holds no key of " + client, "give the keytab of that principal, or the principal of that keytab (klist -kt KEYTAB)", true
	case strings.Contains(lower, "tgt") && strings.Contains(lower, "expired"),
		strings.Contains(lower, "credentials have expired"), strings.Contains(lower, "ticket has expired"):
		return "the Kerberos ticket has expired", "kinit again, or log in with a keytab (--keytab, --principal), which renews by itself", true
	case strings.Contains(lower, "communication error with kdc") || strings.Contains(lower, "failed to communicate with kdc"):
		return "no KDC of the realm answered", "check that the KDC runs and that krb5.conf's [realms] kdc addresses are reachable from here", true
	}
	return "", "", false
}
