package yarn

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
)

// ConfProperty is one property of the RM's effective configuration.
type ConfProperty struct {
	Name  string
	Value string
	Final bool
	// Resource is where the RM got it: a file ("yarn-site.xml"), "programmatically", or a chain of
	// sources joined by Hadoop.
	Resource string
}

// RMConf is the RM's effective configuration as its /conf servlet serves it.
type RMConf struct {
	// Properties sorted by name.
	Properties []ConfProperty
}

// Lookup returns a property by name.
func (c *RMConf) Lookup(name string) (ConfProperty, bool) {
	i, ok := slices.BinarySearchFunc(c.Properties, name, func(p ConfProperty, n string) int {
		return strings.Compare(p.Name, n)
	})
	if !ok {
		return ConfProperty{}, false
	}
	return c.Properties[i], true
}

// Get returns a property's value, "" when absent.
func (c *RMConf) Get(name string) string {
	p, _ := c.Lookup(name)
	return p.Value
}

type confPropertyJSON struct {
	Key      jsonString `json:"key"`
	Value    jsonString `json:"value"`
	IsFinal  jsonBool   `json:"isFinal"`
	Resource jsonString `json:"resource"`
}

func decodeRMConf(r io.Reader) (*RMConf, error) {
	var v struct {
		Properties list[confPropertyJSON] `json:"properties"`
		Property   *confPropertyJSON      `json:"property"`
	}
	if err := decodeJSON(r, &v); err != nil {
		return nil, fmt.Errorf("RM configuration: %w", err)
	}
	props := []confPropertyJSON(v.Properties)
	if v.Property != nil {
		props = append(props, *v.Property)
	}
	out := &RMConf{Properties: make([]ConfProperty, 0, len(props))}
	for _, p := range props {
		if p.Key == "" {
			continue
		}
		out.Properties = append(out.Properties, ConfProperty{
			Name: string(p.Key), Value: string(p.Value), Final: bool(p.IsFinal), Resource: string(p.Resource),
		})
	}
	slices.SortStableFunc(out.Properties, func(a, b ConfProperty) int { return strings.Compare(a.Name, b.Name) })
	// A key appears once in Hadoop's dump; should a server repeat one, the first is kept (stable sort).
	out.Properties = slices.CompactFunc(out.Properties, func(a, b ConfProperty) bool { return a.Name == b.Name })
	return out, nil
}

// Conf returns the RM's effective configuration from its /conf servlet, in JSON (about 200 KB on
// Hadoop 3.5; the defaults are included, with resource "yarn-default.xml"). The servlet is
// answered by a standby too; it may be restricted to admins
// (hadoop.security.instrumentation.requires.admin: ErrForbidden) or hidden behind a proxy
// (ErrNotFound): callers fall back to the local configuration files then.
func (c *Client) Conf(ctx context.Context) (*RMConf, error) {
	return getDecoded(ctx, c, pathConf, url.Values{"format": {"json"}}, decodeRMConf)
}
