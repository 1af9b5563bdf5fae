package yarn

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Hadoop's default web ports of the ResourceManager, for addresses given without one.
const (
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

// parseAddresses parses the Addresses option: "scheme://host:port[/...]" or "host:port"; ids, when
// given, name the addresses in order (HA rm-ids).
func parseAddresses(addrs, ids []string, https bool) ([]rmAddress, error) {
	if len(ids) > 0 && len(ids) != len(addrs) {
		return nil, fmt.Errorf("%d RM ids for %d ResourceManager addresses: give one id per address", len(ids), len(addrs))
	}
	var out []rmAddress
	seen := map[string]bool{}
	for i, a := range addrs {
		id := ""
		if len(ids) > 0 {
			id = ids[i]
		}
		for _, part := range commaItems(a) {
			u, err := parseBase(part, https)
			if err != nil {
				return nil, fmt.Errorf("ResourceManager address %q: %w (want http://host:port, https://host:port or host:port)", part, err)
			}
			if !seen[u.String()] {
				seen[u.String()] = true
				out = append(out, rmAddress{id: id, base: u})
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
	// The client builds every request from scheme and host: a query would be dropped, and a
	// ?delegation= token in it lost silently (simple auth used instead), so a query is refused.
	if u.RawQuery != "" {
		return nil, fmt.Errorf("a query string is not supported (a ?delegation= token is not used: authenticate with --user or Kerberos)")
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
