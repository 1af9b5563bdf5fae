package yarn

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/yarn-er/yarn-er/conf"
)

// Hadoop configuration keys the client reads.
const (
	keyHTTPPolicy        = "yarn.http.policy"
	keyHAEnabled         = "yarn.resourcemanager.ha.enabled"
	keyHARMIDs           = "yarn.resourcemanager.ha.rm-ids"
	keyRMHostname        = "yarn.resourcemanager.hostname"
	keyWebAppAddress     = "yarn.resourcemanager.webapp.address"
	keyWebAppHTTPSAddr   = "yarn.resourcemanager.webapp.https.address"
	keyHTTPAuthType      = "hadoop.http.authentication.type"
	keySPNEGOPrincipal   = "yarn.resourcemanager.webapp.spnego-principal"
	defaultWebAppPort    = 8088
	defaultWebAppTLSPort = 8090
)

// rmAddress is one ResourceManager web endpoint.
type rmAddress struct {
	// id is the HA rm-id ("rm1") when known.
	id string
	// base is scheme://host:port, no path.
	base *url.URL
}

func (a rmAddress) String() string {
	if a.id != "" {
		return a.id + " (" + a.base.String() + ")"
	}
	return a.base.String()
}

// sourced names a configuration key and, when the configuration can tell, where it was set.
func sourced(c *conf.HadoopConfig, key string) string {
	if p, ok := c.Lookup(key); ok {
		if src := p.Source.String(); src != "" {
			return key + " (" + src + ")"
		}
	}
	return key
}

// parseAddresses parses the Addresses option: "scheme://host:port[/...]" or "host:port".
func parseAddresses(addrs []string, https bool) ([]rmAddress, error) {
	var out []rmAddress
	seen := map[string]bool{}
	for _, a := range addrs {
		for _, part := range commaItems(a) {
			u, err := parseBase(part, https)
			if err != nil {
				return nil, fmt.Errorf("ResourceManager address %q: %w (want http://host:port, https://host:port or host:port)", part, err)
			}
			if !seen[u.String()] {
				seen[u.String()] = true
				out = append(out, rmAddress{base: u})
			}
		}
	}
	return out, nil
}

// parseBase parses one address into scheme://host:port.
func parseBase(s string, https bool) (*url.URL, error) {
	if !strings.Contains(s, "://") {
		scheme := "http"
		if https {
			scheme = "https"
		}
		s = scheme + "://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("scheme %q is neither http nor https", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("no host")
	}
	if u.User != nil {
		return nil, fmt.Errorf("credentials in the URL are not supported; use the user and Kerberos options")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n <= 0 || n > 65535 {
			return nil, fmt.Errorf("bad port %q", p)
		}
	} else {
		port := defaultWebAppPort
		if u.Scheme == "https" {
			port = defaultWebAppTLSPort
		}
		u.Host = net.JoinHostPort(u.Hostname(), strconv.Itoa(port))
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host}, nil
}

// useHTTPS reports whether yarn.http.policy asks clients to use https (HTTPS_ONLY; Hadoop's
// YarnConfiguration.useHttps).
func useHTTPS(c *conf.HadoopConfig) bool {
	return c != nil && strings.EqualFold(strings.TrimSpace(c.Get(keyHTTPPolicy)), "HTTPS_ONLY")
}

// addressesFromConf derives the RM web addresses from a Hadoop configuration, as Hadoop's
// WebAppUtils and HAUtil do.
func addressesFromConf(c *conf.HadoopConfig) ([]rmAddress, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: give one (--rm) or a Hadoop configuration directory (HADOOP_CONF_DIR)", ErrNoAddress)
	}
	https := useHTTPS(c)
	key, scheme, port := keyWebAppAddress, "http", defaultWebAppPort
	if https {
		key, scheme, port = keyWebAppHTTPSAddr, "https", defaultWebAppTLSPort
	}
	if !c.GetBool(keyHAEnabled, false) {
		a, err := confAddress(c, "", key, scheme, port)
		if err != nil {
			return nil, err
		}
		return []rmAddress{a}, nil
	}
	ids := commaItems(c.Get(keyHARMIDs))
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: %s is true but %s lists no ids (fix: set it to the RM ids, e.g. rm1,rm2)",
			ErrNoAddress, sourced(c, keyHAEnabled), keyHARMIDs)
	}
	out := make([]rmAddress, 0, len(ids))
	for _, id := range ids {
		a, err := confAddress(c, id, key, scheme, port)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// confAddress reads one RM's web address: key[.id], else yarn.resourcemanager.hostname[.id] with
// the default port. A wildcard bind host (0.0.0.0) is replaced by the hostname key.
func confAddress(c *conf.HadoopConfig, id, key, scheme string, defPort int) (rmAddress, error) {
	suffix := ""
	if id != "" {
		suffix = "." + id
	}
	addrKey, hostKey := key+suffix, keyRMHostname+suffix
	addr := strings.TrimSpace(c.Get(addrKey))
	host := strings.TrimSpace(c.Get(hostKey))
	if wildcardHost(host) {
		host = ""
	}
	if addr == "" {
		if host == "" {
			return rmAddress{}, fmt.Errorf("%w: the Hadoop configuration sets neither %s nor %s (fix: set one of them in yarn-site.xml, or pass the RM address)",
				ErrNoAddress, addrKey, hostKey)
		}
		addr = net.JoinHostPort(host, strconv.Itoa(defPort))
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		// A host without a port.
		h, p = addr, strconv.Itoa(defPort)
	}
	if wildcardHost(h) {
		if host == "" {
			return rmAddress{}, fmt.Errorf("%w: %s is %q, a bind address clients cannot use, and %s is not set (fix: set %s to the RM's host name)",
				ErrNoAddress, sourced(c, addrKey), addr, hostKey, hostKey)
		}
		h = host
	}
	u, err := parseBase(scheme+"://"+net.JoinHostPort(h, p), scheme == "https")
	if err != nil {
		return rmAddress{}, fmt.Errorf("%w: %s = %q: %v", ErrNoAddress, sourced(c, addrKey), addr, err)
	}
	return rmAddress{id: id, base: u}, nil
}

// commaItems returns the comma-separated items of s, trimmed, without the empty ones.
func commaItems(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func wildcardHost(h string) bool {
	return h == "0.0.0.0" || h == "::" || h == "[::]"
}

// Scheduler address keys (ApplicationMasterProtocol, where AMs register and allocate).
const (
	keySchedulerAddress  = "yarn.resourcemanager.scheduler.address"
	defaultSchedulerPort = 8030
)

// SchedulerAddresses returns the ResourceManagers' scheduler addresses (host:port), where an
// ApplicationMaster registers, as Hadoop's YarnConfiguration and HAUtil derive them: without HA,
// yarn.resourcemanager.scheduler.address, else yarn.resourcemanager.hostname with port 8030; with
// yarn.resourcemanager.ha.enabled, the same keys suffixed .<rm-id> for every id of
// yarn.resourcemanager.ha.rm-ids, in that order. A wildcard bind host (0.0.0.0) is replaced by
// the hostname key; an address that names no usable host is an error that says which key to set.
func SchedulerAddresses(c *conf.HadoopConfig) ([]string, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: no Hadoop configuration to read %s from (give --hadoop-conf or set HADOOP_CONF_DIR)",
			ErrNoAddress, keySchedulerAddress)
	}
	ids := []string{""}
	if c.GetBool(keyHAEnabled, false) {
		ids = commaItems(c.Get(keyHARMIDs))
		if len(ids) == 0 {
			return nil, fmt.Errorf("%w: %s is true but %s lists no ids (fix: set it to the RM ids, e.g. rm1,rm2)",
				ErrNoAddress, sourced(c, keyHAEnabled), keyHARMIDs)
		}
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		a, err := confHostPort(c, id, keySchedulerAddress, defaultSchedulerPort)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// confHostPort reads one RM's host:port for key[.id], falling back to
// yarn.resourcemanager.hostname[.id] and defPort.
func confHostPort(c *conf.HadoopConfig, id, key string, defPort int) (string, error) {
	suffix := ""
	if id != "" {
		suffix = "." + id
	}
	addrKey, hostKey := key+suffix, keyRMHostname+suffix
	addr := strings.TrimSpace(c.Get(addrKey))
	host := strings.TrimSpace(c.Get(hostKey))
	if wildcardHost(host) {
		host = ""
	}
	if addr == "" {
		if host == "" {
			return "", fmt.Errorf("%w: the Hadoop configuration sets neither %s nor %s (fix: set one of them in yarn-site.xml)",
				ErrNoAddress, addrKey, hostKey)
		}
		return net.JoinHostPort(host, strconv.Itoa(defPort)), nil
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		h, p = addr, strconv.Itoa(defPort)
	}
	if n, err := strconv.Atoi(p); err != nil || n <= 0 || n > 65535 {
		return "", fmt.Errorf("%w: %s = %q: bad port %q", ErrNoAddress, sourced(c, addrKey), addr, p)
	}
	if wildcardHost(h) || h == "" {
		if host == "" {
			return "", fmt.Errorf("%w: %s is %q, a bind address an ApplicationMaster cannot dial, and %s is not set (fix: set %s to the RM's host name)",
				ErrNoAddress, sourced(c, addrKey), addr, hostKey, hostKey)
		}
		h = host
	}
	return net.JoinHostPort(h, p), nil
}
