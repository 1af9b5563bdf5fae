package conf

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// hadoopFiles are the files LoadHadoop reads from a Hadoop configuration directory, in the order
// Hadoop's daemons load them: Configuration's core-site.xml, YarnConfiguration's yarn-site.xml and
// resource-types.xml, the NodeManager's node-resources.xml, and the CapacityScheduler's
// capacity-scheduler.xml. (The ResourceManager reads capacity-scheduler.xml into a separate
// configuration layered over yarn-site; merged here, it keeps its own sources, and its names
// do not clash with the others'.) The *-default.xml files inside Hadoop's jars are not read:
// callers apply defaults themselves. hdfs-site.xml is read for the HDFS client settings staging
// needs (dfs.namenode.rpc-address.* under HA, dfs.namenode.kerberos.principal,
// dfs.data.transfer.protection), as Hadoop's HdfsConfiguration adds it after core-site.xml;
// mapred-site.xml is not read.
var hadoopFiles = []string{
	"core-site.xml",
	"hdfs-site.xml",
	"yarn-site.xml",
	"resource-types.xml",
	"node-resources.xml",
	"capacity-scheduler.xml",
}

// HadoopFileNames returns the base names of the files LoadHadoop reads, in load order.
func HadoopFileNames() []string { return slices.Clone(hadoopFiles) }

// ErrNotConfigured is returned by LoadHadoop when no directory was given and neither
// HADOOP_CONF_DIR nor HADOOP_HOME is set.
var ErrNotConfigured = errors.New("no Hadoop configuration directory: set --hadoop-conf, HADOOP_CONF_DIR or HADOOP_HOME")

// Property is one Hadoop configuration property.
type Property struct {
	// Name is the property name, trimmed as Hadoop trims it.
	Name string
	// Value is the value after ${var} / ${env.VAR} expansion (Raw when nothing expands). Like Raw it
	// is untrimmed; use TrimmedValue for what Hadoop's getTrimmed, getInt and similar getters see.
	Value string
	// Raw is the value as written in the file.
	Raw string
	// Final is true when the property is marked <final>true</final>.
	Final bool
	// Source is the file:line of the <property> element (or the Source given to Set).
	Source Source
}

// TrimmedValue returns Value without leading and trailing white space, as Hadoop's getTrimmed,
// getInt, getLong and getBoolean read it.
func (p Property) TrimmedValue() string { return strings.TrimSpace(p.Value) }

// HadoopConfig is a loaded Hadoop configuration: the properties of the files of HadoopFileNames, with
// their sources. The zero value is an empty configuration ready to use (it expands no ${env.VAR}).
type HadoopConfig struct {
	dir        string
	files      []string
	props      map[string]*Property
	finals     map[string]Source // names made final, and where
	warns      *warnList
	expandWarn []Warning
	lookupEnv  func(string) (string, bool)
	lim        Limits
}

func (c *HadoopConfig) warnf(kind, sub string, src Source, format string, args ...any) {
	if c.warns == nil {
		c.warns = newWarnList(c.lim.withDefaults().MaxWarnings)
	}
	c.warns.addf(kind, sub, src, format, args...)
}

// Dir returns the configuration directory the files were read from.
func (c *HadoopConfig) Dir() string {
	if c == nil {
		return ""
	}
	return c.dir
}

// Files returns the files read, in load order, as absolute paths (included files not listed).
func (c *HadoopConfig) Files() []string {
	if c == nil {
		return nil
	}
	return append([]string(nil), c.files...)
}

// HasFile reports whether a file with this base name was read, e.g. HasFile("capacity-scheduler.xml").
func (c *HadoopConfig) HasFile(base string) bool {
	for _, f := range c.Files() {
		if filepath.Base(f) == base {
			return true
		}
	}
	return false
}

// Lookup returns the property called name.
func (c *HadoopConfig) Lookup(name string) (Property, bool) {
	if c == nil {
		return Property{}, false
	}
	p, ok := c.props[name]
	if !ok {
		return Property{}, false
	}
	return *p, true
}

// Get returns the expanded value of name, or "" when it is absent.
func (c *HadoopConfig) Get(name string) string {
	p, _ := c.Lookup(name)
	return p.Value
}

// GetBool reads name as Hadoop's Configuration.getBoolean does: "true" or "false" in any case, blanks
// around it ignored; absent, blank or anything else is def.
func (c *HadoopConfig) GetBool(name string, def bool) bool {
	switch v := JavaTrim(c.Get(name)); {
	case strings.EqualFold(v, "true"):
		return true
	case strings.EqualFold(v, "false"):
		return false
	}
	return def
}

// GetTrimmedStrings reads the list name as Hadoop's Configuration.getTrimmedStrings does; see
// TrimmedStrings.
func (c *HadoopConfig) GetTrimmedStrings(name string) []string {
	return TrimmedStrings(c.Get(name))
}

// trimmedSplit is the separator of Hadoop's StringUtils.getTrimmedStrings.
var trimmedSplit = regexp.MustCompile(`[ \t\n\x0B\f\r]*[,\n][ \t\n\x0B\f\r]*`)

// TrimmedStrings splits a list value as Hadoop's StringUtils.getTrimmedStrings does: the trimmed
// value is split at commas and newlines with the blanks around them; empty items in the middle are
// kept, trailing empty items dropped, and a blank value is no items.
func TrimmedStrings(v string) []string {
	t := JavaTrim(v)
	if t == "" {
		return nil
	}
	parts := trimmedSplit.Split(t, -1)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// Names returns all property names, sorted.
func (c *HadoopConfig) Names() []string {
	if c == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(c.props))
}

// WithPrefix returns the properties whose name starts with prefix, sorted by name.
func (c *HadoopConfig) WithPrefix(prefix string) []Property {
	return withPrefix(c.Names(), prefix, func(n string) Property { return *c.props[n] })
}

// Warnings returns the problems found while loading that did not stop it: overrides of final
// properties, properties without a name or value, unresolvable or cyclic ${var} references, ...
func (c *HadoopConfig) Warnings() []Warning {
	if c == nil {
		return nil
	}
	out := c.warns.warnings()
	return append(out, c.expandWarn...)
}

// Set overlays name=value (e.g. a value from the ResourceManager's /conf) from src. Like Hadoop it
// honours final: a property made final earlier is not changed (a warning is recorded when the value
// differs). Values are expanded (${var}, ${env.VAR}) against the whole configuration.
func (c *HadoopConfig) Set(name, value string, src Source) {
	c.set(xmlProp{Property: Property{Name: name, Raw: value, Source: src}, hasValue: true})
	c.expandAll()
}

// set applies one property as Hadoop's Configuration.loadProperty does: a final name keeps its value,
// a property without value only contributes its final flag. It warns when a name is set twice in the
// same file (across files, overriding is normal).
func (c *HadoopConfig) set(p xmlProp) {
	if c.props == nil {
		c.props = make(map[string]*Property)
	}
	if c.finals == nil {
		c.finals = make(map[string]Source)
	}
	if p.hasValue {
		prev, exists := c.props[p.Name]
		if finalSrc, final := c.finals[p.Name]; final {
			if exists && prev.Raw != p.Raw {
				c.warnf("final", p.Name, p.Source, "Attempt to override final parameter: %s; Ignoring. (it is final at %s; fix: remove this setting, or the <final> there)", p.Name, finalSrc)
			}
		} else {
			// (the same <property> again, through a file included twice, is no second setting)
			if exists && prev.Source.File != "" && prev.Source.File == p.Source.File && prev.Source.Line != p.Source.Line {
				c.warnf("again", p.Name, p.Source, "%s is set again in the same file (first at line %d); Hadoop uses this later value (fix: remove one of them)", p.Name, prev.Source.Line)
			}
			np := p.Property
			np.Value = np.Raw
			c.props[p.Name] = &np
		}
	}
	if p.Final {
		if _, already := c.finals[p.Name]; !already {
			c.finals[p.Name] = p.Source
		}
		if cur, ok := c.props[p.Name]; ok {
			cur.Final = true
		}
	}
}

// HadoopOptions tells LoadHadoop where to find Hadoop's configuration.
type HadoopOptions struct {
	// Dir is the configuration directory; "" means $HADOOP_CONF_DIR, then $HADOOP_HOME/etc/hadoop.
	Dir string
	// Getenv reads the environment (directory defaults and ${env.VAR}); nil means os.Getenv.
	Getenv func(string) string
	// Logger receives the load-time warnings; nil discards them.
	Logger *slog.Logger
	// Limits bound the load (file sizes, includes, properties, expansion, warnings); zero fields take
	// the defaults.
	Limits Limits
}

// includeMaxDepth bounds nested <xi:include>s.
const includeMaxDepth = 16

// LoadHadoop reads the files of HadoopFileNames present in the configuration directory, in that order,
// as Hadoop does: later files override earlier ones except for final properties, <xi:include>s are
// followed (relative to the including file, with <xi:fallback> when the target is missing), and
// values are expanded like Hadoop's Configuration.get (${name}, ${env.VAR}, ${env.VAR:-default},
// ${env.VAR-default}; at most 20 substitutions; there are no Java system properties, so ${user.name}
// stays as written). Deprecated property names are not mapped to their replacements (Hadoop does
// that with a built-in table). A directory that was named but does not exist is an
// error; when nothing names a directory the error is ErrNotConfigured. Malformed XML is an *Error
// with file:line. Only regular files are read (a FIFO or a device is an error wrapping ErrNotRegular),
// within opts.Limits (an error wrapping ErrLimit): a file included several times is read once, every
// include counts, and repeated warnings are folded.
func LoadHadoop(opts HadoopOptions) (*HadoopConfig, error) {
	getenv, lookupEnv := opts.Getenv, os.LookupEnv
	if getenv == nil {
		getenv = os.Getenv
	} else {
		// a Getenv cannot tell an empty variable from an unset one: treat empty as unset
		lookupEnv = func(name string) (string, bool) {
			v := getenv(name)
			return v, v != ""
		}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	dir, origin := opts.Dir, "--hadoop-conf"
	if dir == "" {
		if d := getenv("HADOOP_CONF_DIR"); d != "" {
			dir, origin = d, "HADOOP_CONF_DIR"
		} else if h := getenv("HADOOP_HOME"); h != "" {
			dir, origin = filepath.Join(h, "etc", "hadoop"), "HADOOP_HOME"
		} else {
			return nil, ErrNotConfigured
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &Error{Source: Source{File: dir}, Err: err, Fix: "give the Hadoop configuration directory as an absolute path"}
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &Error{Source: Source{File: abs}, Err: fmt.Errorf("Hadoop configuration directory (from %s) does not exist", origin),
			Fix: "point --hadoop-conf (or HADOOP_CONF_DIR) at the directory holding yarn-site.xml, usually /etc/hadoop/conf or $HADOOP_HOME/etc/hadoop"}
	case err != nil:
		return nil, &Error{Source: Source{File: abs}, Err: err, Fix: unreadableFix(err, "make the Hadoop configuration directory readable")}
	case !fi.IsDir():
		return nil, &Error{Source: Source{File: abs}, Err: fmt.Errorf("Hadoop configuration path (from %s) is not a directory", origin),
			Fix: "give the directory holding yarn-site.xml, not a file"}
	}

	lim := opts.Limits.withDefaults()
	cfg := &HadoopConfig{dir: abs, lookupEnv: lookupEnv, lim: lim, warns: newWarnList(lim.MaxWarnings)}
	ld := &hadoopLoader{budget: newBudget(lim), warns: cfg.warns, cache: map[string]xmlResult{}}
	for _, base := range hadoopFiles {
		path := filepath.Join(abs, base)
		data, err := ld.budget.readFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		ld.stack = []string{path}
		res, err := parseHadoopXMLIn(path, data, ld.include, ld.warns, ld.budget)
		if err != nil {
			return nil, err
		}
		cfg.files = append(cfg.files, path)
		for _, p := range res.props {
			cfg.set(p)
		}
	}
	if len(cfg.files) == 0 {
		cfg.warnf("", "", Source{File: abs}, "no Hadoop configuration files (%s) in this directory (fix: point --hadoop-conf at the directory holding yarn-site.xml)", strings.Join(hadoopFiles, ", "))
	}
	cfg.expandAll()
	for _, w := range cfg.Warnings() {
		logger.Warn(w.Message, "source", w.Source.String())
	}
	return cfg, nil
}

// hadoopLoader is the state of one LoadHadoop: the budget, the shared warnings, and the files already
// parsed, so that a file included many times is read and parsed once.
type hadoopLoader struct {
	budget *budget
	warns  *warnList
	cache  map[string]xmlResult
	stack  []string // files being parsed, outermost first
}

// include follows <xi:include href> to a file on disk, relative to the including file.
func (ld *hadoopLoader) include(href string, from Source) (xmlResult, bool, error) {
	if strings.Contains(href, "://") && !strings.HasPrefix(href, "file://") {
		return xmlResult{}, false, nil
	}
	path := strings.TrimPrefix(href, "file://")
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(from.File), path)
	}
	path = filepath.Clean(path)
	for _, f := range ld.stack {
		if f == path {
			return xmlResult{}, false, &Error{Source: from, Err: fmt.Errorf("include cycle: %s", strings.Join(append(slices.Clone(ld.stack), path), " -> ")),
				Fix: "remove the <xi:include> that leads back to a file already being read"}
		}
	}
	if len(ld.stack) >= includeMaxDepth {
		return xmlResult{}, false, &Error{Source: from, Err: fmt.Errorf("includes nested more than %d deep", includeMaxDepth), Fix: "include the files directly"}
	}
	if err := ld.budget.addInclude(from); err != nil {
		return xmlResult{}, false, err
	}
	if res, ok := ld.cache[path]; ok {
		return res, true, nil
	}
	data, err := ld.budget.readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return xmlResult{}, false, nil
	}
	if err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			ce.Err = fmt.Errorf("included at %s: %w", from, ce.Err)
		}
		return xmlResult{}, false, err
	}
	ld.stack = append(ld.stack, path)
	defer func() { ld.stack = ld.stack[:len(ld.stack)-1] }()
	res, err := parseHadoopXMLIn(path, data, ld.include, ld.warns, ld.budget)
	if err != nil {
		return xmlResult{}, false, err
	}
	ld.cache[path] = res
	return res, true, nil
}
