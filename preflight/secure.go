package preflight

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/yarn"
)

// The security checks: what breaks GPU jobs on a Kerberized or HTTPS cluster before any of them
// runs. Each passes with a short note on a cluster without Kerberos (or without HTTPS).

// Hadoop's security keys.
const (
	keyAuthentication   = "hadoop.security.authentication"
	keyRPCProtection    = "hadoop.rpc.protection"
	keyRMPrincipal      = "yarn.resourcemanager.principal"
	keyNNPrincipal      = "dfs.namenode.kerberos.principal"
	keyDataTransferProt = "dfs.data.transfer.protection"
	keyYARNHTTPPolicy   = "yarn.http.policy"
	keyRMSchedulerAddr  = "yarn.resourcemanager.scheduler.address"
	keyRMHostname       = "yarn.resourcemanager.hostname"
)

// kerberized reports whether the Hadoop configuration turns Kerberos on, and where.
func (f *facts) kerberized() (bool, string) {
	hc := f.in.Hadoop
	if hc == nil {
		return false, ""
	}
	return strings.EqualFold(strings.TrimSpace(hc.Get(keyAuthentication)), "kerberos"), sourceOr(hc, keyAuthentication, hc.Dir())
}

// loginCheck: under Kerberos, yarn-er must have a login (a keytab holding the principal, or a
// credential cache with a ticket that has not expired).
func (f *facts) loginCheck(_ context.Context, out *results) {
	if !f.needsHadoop(out, "no Hadoop configuration") {
		return
	}
	krb, src := f.kerberized()
	if !krb {
		out.pass(src, "the cluster does not use Kerberos (%s is not kerberos): no login needed", keyAuthentication)
		return
	}
	if f.in.Client == nil {
		out.skip("no ResourceManager client: the login is made with it (%s)", f.in.NoClientReason)
		return
	}
	cl := f.in.Client.KerberosClient()
	if cl == nil || cl.Credentials == nil {
		out.fail(src, "log in with Kerberos: kinit, or --keytab with --principal (YARN_ER_KEYTAB, YARN_ER_PRINCIPAL), and --auth kerberos or auto",
			"the cluster uses Kerberos, but yarn-er has no Kerberos login (authentication %s): every call to it would be refused", f.in.Client.Auth())
		return
	}
	who := cl.Credentials.UserName() + "@" + cl.Credentials.Domain()
	if f.live != nil && f.live.infoErr != nil && yarn.IsAuthError(f.live.infoErr) {
		out.fail(who, "see the error: it names what to fix", "the login of %s failed: %v", who, f.live.infoErr)
		return
	}
	if cl.Credentials.HasKeytab() {
		out.pass(who, "logged in as %s from a keytab (renewed as needed)", who)
		return
	}
	if until := cl.Credentials.ValidUntil(); !until.IsZero() {
		left := time.Until(until).Round(time.Minute)
		if left <= 0 {
			out.fail(who, "kinit again, or log in with a keytab (--keytab, --principal)",
				"the ticket of %s in the credential cache expired at %s", who, until.UTC().Format(time.RFC3339))
			return
		}
		if left < time.Hour {
			out.warn(who, "kinit again before submitting a long job, or log in with a keytab",
				"the ticket of %s expires in %s (%s)", who, left, until.UTC().Format(time.RFC3339))
			return
		}
		out.pass(who, "logged in as %s from a credential cache, valid for %s more", who, left)
		return
	}
	out.pass(who, "logged in as %s from a credential cache", who)
}

// principalsCheck: the RM's and the NameNode's principals are set, and _HOST in them resolves to
// the host clients reach each by. yarn.resourcemanager.principal is also the HDFS token's renewer.
func (f *facts) principalsCheck(ctx context.Context, out *results) {
	if !f.needsHadoop(out, "no Hadoop configuration") {
		return
	}
	krb, _ := f.kerberized()
	if !krb {
		out.pass("", "the cluster does not use Kerberos: no service principals needed")
		return
	}
	hc := f.in.Hadoop
	var notes []string
	for _, p := range []struct {
		key, addrKey, what string
	}{
		{keyRMPrincipal, keyRMSchedulerAddr, "the ResourceManager's (and the HDFS delegation token's renewer)"},
		{keyNNPrincipal, "fs.defaultFS", "the NameNode's"},
	} {
		v := strings.TrimSpace(hc.Get(p.key))
		if v == "" {
			out.fail(hc.Dir(), fmt.Sprintf("set %s in the Hadoop configuration to the service's principal, e.g. %s", p.key, examplePrincipal(p.key)),
				"%s is not set: %s principal is unknown, so yarn-er cannot authenticate the service (nor name the token's renewer)", p.key, p.what)
			return
		}
		if !strings.Contains(v, "_HOST") {
			notes = append(notes, fmt.Sprintf("%s = %s", p.key, v))
			continue
		}
		host := f.serviceHost(p.addrKey)
		if host == "" {
			out.fail(sourceOr(hc, p.key, hc.Dir()), fmt.Sprintf("set %s (or %s) to the service's host name", p.addrKey, keyRMHostname),
				"%s = %s has _HOST, and %s names no host to put there", p.key, v, p.addrKey)
			return
		}
		name, how := resolveHost(ctx, host)
		if name == "" {
			out.fail(sourceOr(hc, p.key, hc.Dir()),
				fmt.Sprintf("give %s by its host name, or give the full principal in %s", p.addrKey, p.key),
				"%s = %s: _HOST would be the name of %s, which has none (%s)", p.key, v, host, how)
			return
		}
		notes = append(notes, fmt.Sprintf("%s = %s", p.key, strings.ReplaceAll(v, "_HOST", strings.ToLower(name))))
	}
	out.pass(hc.Dir(), "%s", strings.Join(notes, "; "))
}

// examplePrincipal is a typical principal of a key, for fixes.
func examplePrincipal(key string) string {
	if key == keyNNPrincipal {
		return "nn/_HOST@EXAMPLE.COM"
	}
	return "rm/_HOST@EXAMPLE.COM"
}

// serviceHost is the host of an address key (fs.defaultFS: its authority), with the RM's hostname
// as the fallback of the RM's addresses.
func (f *facts) serviceHost(addrKey string) string {
	hc := f.in.Hadoop
	v := strings.TrimSpace(hc.Get(addrKey))
	if addrKey == "fs.defaultFS" {
		u, err := url.Parse(v)
		if err != nil {
			return ""
		}
		host := u.Hostname()
		if nns := hc.GetTrimmedStrings("dfs.ha.namenodes." + host); len(nns) > 0 {
			if a := strings.TrimSpace(hc.Get("dfs.namenode.rpc-address." + host + "." + nns[0])); a != "" {
				h, _, _ := net.SplitHostPort(a)
				return h
			}
		}
		return host
	}
	if v != "" {
		if h, _, err := net.SplitHostPort(v); err == nil && h != "" && h != "0.0.0.0" {
			return h
		}
	}
	return strings.TrimSpace(hc.Get(keyRMHostname))
}

// resolveHost is the name _HOST becomes for host: host itself, or for an IP address its first
// reverse name ("" with the reason when there is none).
func resolveHost(ctx context.Context, host string) (string, string) {
	if net.ParseIP(host) == nil {
		return host, ""
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	names, err := net.DefaultResolver.LookupAddr(lctx, host)
	if err != nil || len(names) == 0 {
		return "", fmt.Sprintf("no reverse name: %v", err)
	}
	return strings.TrimSuffix(names[0], "."), ""
}

// validProtections are hadoop.rpc.protection's values.
var validProtections = []string{"authentication", "integrity", "privacy"}

// protections parses a protection list; bad holds values Hadoop refuses.
func protections(v string) (vals, bad []string) {
	for _, p := range strings.Split(v, ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		switch {
		case p == "":
		case slices.Contains(validProtections, p):
			vals = append(vals, p)
		default:
			bad = append(bad, p)
		}
	}
	return vals, bad
}

// rpcProtectionCheck: hadoop.rpc.protection and dfs.data.transfer.protection hold values Hadoop
// knows, and yarn-er's configuration shares one with the ResourceManager's (its /conf), or the
// AM's and the clients' connections fail with "No common protection layer".
func (f *facts) rpcProtectionCheck(_ context.Context, out *results) {
	if !f.needsHadoop(out, "no Hadoop configuration") {
		return
	}
	krb, _ := f.kerberized()
	hc := f.in.Hadoop
	mine, bad := protections(hc.Get(keyRPCProtection))
	if len(mine) == 0 && len(bad) == 0 {
		mine = []string{"authentication"}
	}
	if len(bad) > 0 {
		out.fail(sourceOr(hc, keyRPCProtection, hc.Dir()), "use authentication, integrity or privacy (a comma list)",
			"%s = %q: Hadoop knows no %s", keyRPCProtection, hc.Get(keyRPCProtection), strings.Join(bad, ", "))
		return
	}
	if _, badDT := protections(hc.Get(keyDataTransferProt)); len(badDT) > 0 {
		out.fail(sourceOr(hc, keyDataTransferProt, hc.Dir()), "use authentication, integrity or privacy (a comma list)",
			"%s = %q: Hadoop knows no %s", keyDataTransferProt, hc.Get(keyDataTransferProt), strings.Join(badDT, ", "))
		return
	}
	if _, set := hc.Lookup(keyRPCProtection); !krb && !set {
		out.pass("", "the cluster does not use Kerberos; RPC tokens use %s (the default)", strings.Join(mine, ","))
		return
	}
	if f.live == nil || f.live.rmConf == nil {
		out.pass(sourceOr(hc, keyRPCProtection, hc.Dir()), "%s = %s (the ResourceManager's own value was not read)", keyRPCProtection, strings.Join(mine, ","))
		return
	}
	theirs, _ := protections(f.live.rmConf.Get(keyRPCProtection))
	if len(theirs) == 0 {
		theirs = []string{"authentication"}
	}
	shared := false
	for _, p := range mine {
		if slices.Contains(theirs, p) {
			shared = true
		}
	}
	if !shared {
		out.fail(sourceOr(hc, keyRPCProtection, hc.Dir()),
			fmt.Sprintf("set %s to the cluster's value, %s, in core-site.xml", keyRPCProtection, strings.Join(theirs, ",")),
			"%s: this configuration says %s, the ResourceManager %s: Hadoop clients (Flink's among them) fail with \"No common protection layer\"",
			keyRPCProtection, strings.Join(mine, ","), strings.Join(theirs, ","))
		return
	}
	out.pass(sourceOr(hc, keyRPCProtection, hc.Dir()), "%s: %s here, %s on the ResourceManager", keyRPCProtection, strings.Join(mine, ","), strings.Join(theirs, ","))
}

// httpsCheck: with yarn.http.policy=HTTPS_ONLY the RM is reached over https and its certificate
// verifies.
func (f *facts) httpsCheck(_ context.Context, out *results) {
	if !f.needsHadoop(out, "no Hadoop configuration") {
		return
	}
	hc := f.in.Hadoop
	policy := strings.ToUpper(strings.TrimSpace(hc.Get(keyYARNHTTPPolicy)))
	if policy != "HTTPS_ONLY" {
		if policy == "" {
			policy = "HTTP_ONLY"
		}
		out.pass(sourceOr(hc, keyYARNHTTPPolicy, ""), "%s is %s: the web services are reached over http", keyYARNHTTPPolicy, policy)
		return
	}
	src := sourceOr(hc, keyYARNHTTPPolicy, hc.Dir())
	if f.in.Client == nil {
		out.skip("no ResourceManager client (%s)", f.in.NoClientReason)
		return
	}
	var plain []string
	for _, a := range f.in.Client.Addresses() {
		if !strings.HasPrefix(strings.ToLower(a), "https://") {
			plain = append(plain, a)
		}
	}
	if len(plain) > 0 {
		out.fail(src, "reach the ResourceManager at its https address (yarn.resourcemanager.webapp.https.address; --rm https://HOST:PORT)",
			"%s is HTTPS_ONLY, but the ResourceManager is reached at %s", keyYARNHTTPPolicy, strings.Join(plain, ", "))
		return
	}
	if f.live != nil && f.live.infoErr != nil {
		if fix := tlsFix(f.live.infoErr); fix != "" {
			out.fail(src, fix, "the ResourceManager's certificate does not verify: %v", f.live.infoErr)
			return
		}
		out.skip("the ResourceManager did not answer: %v", f.live.infoErr)
		return
	}
	out.pass(src, "%s is HTTPS_ONLY and the ResourceManager's certificate verifies (%s)", keyYARNHTTPPolicy, strings.Join(f.in.Client.Addresses(), ", "))
}

// tlsFix says how to fix an error that is a certificate's, or "".
func tlsFix(err error) string {
	s := err.Error()
	if strings.Contains(s, "x509:") || strings.Contains(s, "tls: failed to verify") {
		return "give the CA that signed the ResourceManager's certificate with --tls-ca or YARN_ER_TLS_CA, and reach it by a name the certificate holds"
	}
	return ""
}

// secureExecutorCheck: under Kerberos, containers should run as the submitting user
// (LinuxContainerExecutor); with DefaultContainerExecutor they run as the NodeManager's user, so
// every user's GPU job shares one identity and its files, and devices are not isolated.
func (f *facts) secureExecutorCheck(_ context.Context, out *results) {
	if !f.needsHadoop(out, "no Hadoop configuration") {
		return
	}
	krb, src := f.kerberized()
	if !krb {
		out.pass("", "the cluster does not use Kerberos")
		return
	}
	hc := f.in.Hadoop
	exec := strings.TrimSpace(hc.Get(keyContainerExecutor))
	if strings.HasSuffix(exec, "LinuxContainerExecutor") {
		out.pass(sourceOr(hc, keyContainerExecutor, src), "the NodeManagers run containers as the submitting user (%s)", exec)
		return
	}
	shown := exec
	if shown == "" {
		shown = "DefaultContainerExecutor (Hadoop's default)"
	}
	out.warn(sourceOr(hc, keyContainerExecutor, src),
		fmt.Sprintf("on the NodeManagers set %s=%s (the setuid container-executor, with container-executor.cfg's [gpu] module for GPU isolation)", keyContainerExecutor, linuxExecutor),
		"the cluster uses Kerberos but %s runs every container as the NodeManager's own user: jobs of different users share that identity and their files, and GPUs are not isolated (if this is not the NodeManagers' configuration, check theirs)", shown)
}
