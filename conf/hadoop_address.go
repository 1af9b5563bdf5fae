package conf

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Hadoop configuration keys that locate the ResourceManager's services and the default file
// system (YarnConfiguration, CommonConfigurationKeys).
const (
	// KeyYARNHTTPPolicy selects http or https for YARN's web services (HTTP_ONLY, HTTPS_ONLY,
	// HTTP_AND_HTTPS).
	KeyYARNHTTPPolicy = "yarn.http.policy"
	// KeyRMHAEnabled turns on ResourceManager high availability.
	KeyRMHAEnabled = "yarn.resourcemanager.ha.enabled"
	// KeyRMHAIDs lists the rm-ids of an HA set; each service key then takes a ".<rm-id>" suffix.
	KeyRMHAIDs = "yarn.resourcemanager.ha.rm-ids"
	// KeyRMHostname is the RM's host name, the host of every service address not set explicitly.
	KeyRMHostname = "yarn.resourcemanager.hostname"
	// KeyRMWebAppAddress is the RM's http web address (REST API).
	KeyRMWebAppAddress = "yarn.resourcemanager.webapp.address"
	// KeyRMWebAppHTTPSAddress is the RM's https web address, used with yarn.http.policy=HTTPS_ONLY.
	KeyRMWebAppHTTPSAddress = "yarn.resourcemanager.webapp.https.address"
	// KeyRMSchedulerAddress is the RM's ApplicationMasterProtocol (scheduler) IPC address.
	KeyRMSchedulerAddress = "yarn.resourcemanager.scheduler.address"
	// KeyRMAdminAddress is the RM's admin IPC address.
	KeyRMAdminAddress = "yarn.resourcemanager.admin.address"
	// KeyHTTPAuthenticationType is the authentication of Hadoop's web endpoints (simple, kerberos).
	KeyHTTPAuthenticationType = "hadoop.http.authentication.type"
	// KeyRMWebAppSPNEGOPrincipal is the RM's HTTP service principal.
	KeyRMWebAppSPNEGOPrincipal = "yarn.resourcemanager.webapp.spnego-principal"
	// KeyDefaultFS is the default file system URI.
	KeyDefaultFS = "fs.defaultFS"
)

// Hadoop's default ports of the ResourceManager's services, and the default file system.
const (
	DefaultRMWebAppPort      = 8088
	DefaultRMWebAppHTTPSPort = 8090
	DefaultRMSchedulerPort   = 8030
	DefaultRMAdminPort       = 8033
	DefaultFS                = "file:///"
)

// ErrNoRMAddress is matched (errors.Is) by every error about a ResourceManager address the
// configuration does not give, or gives in a form clients cannot use.
var ErrNoRMAddress = errors.New("no ResourceManager address")

// RMAddress is the address of one ResourceManager service, resolved from the configuration.
type RMAddress struct {
	// RMID is the HA rm-id ("rm1"); "" without HA.
	RMID string
	// Scheme is "http" or "https" for the web service, "" for IPC services.
	Scheme string
	// Host and Port are where clients connect (never a wildcard bind address).
	Host string
	Port int
	// Key is the property the address was read from: the service key (with its ".<rm-id>"
	// suffix), or the hostname key when the address is the host name with the default port.
	Key string
	// Source is where Key is set.
	Source Source
}

// HostPort returns "host:port" ("[::1]:8030" for IPv6 literals).
func (a RMAddress) HostPort() string { return net.JoinHostPort(a.Host, strconv.Itoa(a.Port)) }

// URL returns "scheme://host:port" for a web address, HostPort for an IPC one.
func (a RMAddress) URL() string {
	if a.Scheme == "" {
		return a.HostPort()
	}
	return a.Scheme + "://" + a.HostPort()
}

// YARNHTTPSOnly reports whether yarn.http.policy asks clients to use https (HTTPS_ONLY,
// case-insensitive, as YarnConfiguration.useHttps reads it). A nil configuration is http.
func (c *HadoopConfig) YARNHTTPSOnly() bool {
	return c != nil && strings.EqualFold(JavaTrim(c.Get(KeyYARNHTTPPolicy)), "HTTPS_ONLY")
}

// RMWebKerberos reports whether the RM's web endpoints want SPNEGO
// (hadoop.http.authentication.type=kerberos).
func (c *HadoopConfig) RMWebKerberos() bool {
	return c != nil && strings.EqualFold(JavaTrim(c.Get(KeyHTTPAuthenticationType)), "kerberos")
}

// RMWebSPNEGOPrincipal returns yarn.resourcemanager.webapp.spnego-principal, trimmed; "" when unset.
func (c *HadoopConfig) RMWebSPNEGOPrincipal() string {
	if c == nil {
		return ""
	}
	return JavaTrim(c.Get(KeyRMWebAppSPNEGOPrincipal))
}

// TrimmedStringCollection splits a list value as Hadoop's Configuration.getTrimmedStringCollection
// does: items trimmed, empty items removed, later duplicates dropped, order kept.
func TrimmedStringCollection(v string) []string {
	var out []string
	for _, item := range TrimmedStrings(v) {
		if item != "" && !slices.Contains(out, item) {
			out = append(out, item)
		}
	}
	return out
}

// RMHAIDs returns the rm-ids of an HA set (yarn.resourcemanager.ha.rm-ids as
// getTrimmedStringCollection reads it), or nil when HA is off. HA on without ids is an error
// matching ErrNoRMAddress.
func (c *HadoopConfig) RMHAIDs() ([]string, error) {
	if c == nil || !c.GetBool(KeyRMHAEnabled, false) {
		return nil, nil
	}
	ids := TrimmedStringCollection(c.Get(KeyRMHAIDs))
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: %s is true but %s lists no ids (fix: set it to the RM ids, e.g. rm1,rm2)",
			ErrNoRMAddress, c.sourced(KeyRMHAEnabled), KeyRMHAIDs)
	}
	return ids, nil
}

// RMWebAddresses returns the ResourceManager web (REST) addresses, as Hadoop's WebAppUtils and
// HAUtil find them: yarn.resourcemanager.webapp.address, or .webapp.https.address with
// yarn.http.policy=HTTPS_ONLY; else yarn.resourcemanager.hostname with port 8088 (https 8090).
// With HA every rm-id gives one address, from the keys with the ".<rm-id>" suffix. A wildcard
// bind host (0.0.0.0) is replaced by the hostname key. Errors match ErrNoRMAddress and name the
// keys (and the file and line) to fix.
func (c *HadoopConfig) RMWebAddresses() ([]RMAddress, error) {
	if c.YARNHTTPSOnly() {
		return c.rmAddresses(KeyRMWebAppHTTPSAddress, "https", DefaultRMWebAppHTTPSPort)
	}
	return c.rmAddresses(KeyRMWebAppAddress, "http", DefaultRMWebAppPort)
}

// RMSchedulerAddresses returns the addresses of the RM's scheduler (ApplicationMasterProtocol),
// yarn.resourcemanager.scheduler.address[.<rm-id>], else the hostname key with port 8030; see
// RMWebAddresses for HA and the errors.
func (c *HadoopConfig) RMSchedulerAddresses() ([]RMAddress, error) {
	return c.rmAddresses(KeyRMSchedulerAddress, "", DefaultRMSchedulerPort)
}

// RMAdminAddresses returns the addresses of the RM's admin service,
// yarn.resourcemanager.admin.address[.<rm-id>], else the hostname key with port 8033; see
// RMWebAddresses for HA and the errors.
func (c *HadoopConfig) RMAdminAddresses() ([]RMAddress, error) {
	return c.rmAddresses(KeyRMAdminAddress, "", DefaultRMAdminPort)
}

// rmAddresses resolves one service key for a single RM or every rm-id.
func (c *HadoopConfig) rmAddresses(key, scheme string, defPort int) ([]RMAddress, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: no Hadoop configuration", ErrNoRMAddress)
	}
	ids, err := c.RMHAIDs()
	if err != nil {
		return nil, err
	}
	if ids == nil {
		a, err := c.rmAddress("", key, scheme, defPort)
		if err != nil {
			return nil, err
		}
		return []RMAddress{a}, nil
	}
	out := make([]RMAddress, 0, len(ids))
	for _, id := range ids {
		a, err := c.rmAddress(id, key, scheme, defPort)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// rmAddress reads one RM's address: key[.id], else yarn.resourcemanager.hostname[.id] with the
// default port. A wildcard bind host is replaced by the hostname key.
func (c *HadoopConfig) rmAddress(id, key, scheme string, defPort int) (RMAddress, error) {
	suffix := ""
	if id != "" {
		suffix = "." + id
	}
	addrKey, hostKey := key+suffix, KeyRMHostname+suffix
	addr := JavaTrim(c.Get(addrKey))
	host := JavaTrim(c.Get(hostKey))
	if isWildcardHost(host) {
		host = ""
	}
	out := RMAddress{RMID: id, Scheme: scheme, Key: addrKey}
	if addr == "" {
		if host == "" {
			return RMAddress{}, fmt.Errorf("%w: the Hadoop configuration sets neither %s nor %s (fix: set one of them in yarn-site.xml, or pass the RM address)",
				ErrNoRMAddress, addrKey, hostKey)
		}
		out.Key = hostKey
		addr = net.JoinHostPort(host, strconv.Itoa(defPort))
	}
	if p, ok := c.Lookup(out.Key); ok {
		out.Source = p.Source
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		// A host without a port.
		h, p = strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"), strconv.Itoa(defPort)
	}
	if isWildcardHost(h) {
		if host == "" {
			return RMAddress{}, fmt.Errorf("%w: %s is %q, a bind address clients cannot use, and %s is not set (fix: set %s to the RM's host name)",
				ErrNoRMAddress, c.sourced(addrKey), addr, hostKey, hostKey)
		}
		h = host
	}
	port, err := strconv.Atoi(p)
	switch {
	case err != nil || port <= 0 || port > 65535:
		return RMAddress{}, fmt.Errorf("%w: %s = %q: bad port %q (want host:port with a port from 1 to 65535)",
			ErrNoRMAddress, c.sourced(addrKey), addr, p)
	case h == "" || strings.ContainsAny(h, "/@?# "):
		return RMAddress{}, fmt.Errorf("%w: %s = %q: bad host %q (want host:port)", ErrNoRMAddress, c.sourced(addrKey), addr, h)
	}
	out.Host, out.Port = h, port
	return out, nil
}

// DefaultFileSystem returns fs.defaultFS as a URL (file:/// when unset), with where it is set. Like
// Hadoop's FileSystem.getDefaultUri it reads the deprecated forms too: "local" is file:/// and a
// value without "://" ("namenode:8020") is an hdfs:// authority. A value that is not a URI is an
// error naming the key.
func (c *HadoopConfig) DefaultFileSystem() (*url.URL, Source, error) {
	v, src := DefaultFS, Source{}
	if c != nil {
		if p, ok := c.Lookup(KeyDefaultFS); ok && JavaTrim(p.Value) != "" {
			v, src = JavaTrim(p.Value), p.Source
		}
	}
	switch {
	case v == "local":
		v = DefaultFS
	case !strings.Contains(v, "://"):
		v = "hdfs://" + v
	}
	u, err := url.Parse(v)
	if err == nil && (u.Scheme == "" || u.Opaque != "") {
		err = errors.New("no scheme")
	}
	if err != nil {
		return nil, src, &Error{Source: src, Key: KeyDefaultFS, Err: fmt.Errorf("%q is not a file system URI: %w", v, err),
			Fix: "give a URI such as hdfs://namenode:8020 or file:///"}
	}
	return u, src, nil
}

// sourced names a key and, when set in a file or flag, where.
func (c *HadoopConfig) sourced(key string) string {
	if p, ok := c.Lookup(key); ok {
		if src := p.Source.String(); src != "" {
			return key + " (" + src + ")"
		}
	}
	return key
}

func isWildcardHost(h string) bool {
	return h == "0.0.0.0" || h == "::" || h == "[::]"
}
