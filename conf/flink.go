package conf

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// File names Flink looks for in its configuration directory.
const (
	// FlinkLegacyFile is the configuration file of Flink 1.x, read with Flink's line-based parser.
	FlinkLegacyFile = "flink-conf.yaml"
	// FlinkYAMLFile is the standard YAML configuration file of Flink 1.19 and later (the only one Flink 2.x reads).
	FlinkYAMLFile = "config.yaml"
)

// FlinkValue is one Flink configuration entry.
type FlinkValue struct {
	// Key is the configuration key, case kept as written (Flink keys are case sensitive).
	Key string
	// Value is the string Flink sees: for the legacy flink-conf.yaml the raw text after the first ": "
	// (trimmed, quotes kept as Flink keeps them); for config.yaml the scalar's text as written; a YAML
	// sequence is rendered in the legacy ';'-joined form.
	Value string
	// List holds the items when config.yaml gave a YAML sequence (flow or block); nil otherwise.
	List []string
	// Source is where the value came from: file:line, or Flag "-D key".
	Source Source
}

// Items returns the list value: List when set, else SplitFlinkList(Value). Errors are *Error values
// naming the entry's source.
func (v FlinkValue) Items() ([]string, error) {
	if v.List != nil {
		return slices.Clone(v.List), nil
	}
	items, err := SplitFlinkList(v.Value)
	if err != nil {
		return nil, &Error{
			Source: v.Source,
			Key:    v.Key,
			Err:    err,
			Fix:    `separate items with ';' and quote an item that contains ';' or a quote as 'it''s' or "a;b"`,
		}
	}
	return items, nil
}

// FlinkConfig is a loaded Flink configuration: keys with values and their sources.
// The zero value is an empty configuration ready to use.
type FlinkConfig struct {
	values       map[string]FlinkValue
	flinkStrings map[string]string // Flink's own rendering, where it differs from the text as written
	head         []Warning         // warnings about the choice of file, first
	warns        *warnList
	maxWarnings  int
	files        []string
}

// Lookup returns the entry for key (exact, case-sensitive match).
func (c *FlinkConfig) Lookup(key string) (FlinkValue, bool) {
	if c == nil {
		return FlinkValue{}, false
	}
	v, ok := c.values[key]
	if !ok {
		return FlinkValue{}, false
	}
	v.List = slices.Clone(v.List)
	return v, true
}

// Get returns the value of key, or "" when it is absent.
func (c *FlinkConfig) Get(key string) string {
	v, _ := c.Lookup(key)
	return v.Value
}

// Keys returns all keys, sorted.
func (c *FlinkConfig) Keys() []string {
	if c == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(c.values))
}

// WithPrefix returns the entries whose key starts with prefix, sorted by key.
func (c *FlinkConfig) WithPrefix(prefix string) []FlinkValue {
	return withPrefix(c.Keys(), prefix, func(k string) FlinkValue { v, _ := c.Lookup(k); return v })
}

// Warnings returns the problems found while loading that did not stop it (duplicate keys, skipped
// lines, the choice between flink-conf.yaml and config.yaml, ...), in the order found.
func (c *FlinkConfig) Warnings() []Warning {
	if c == nil {
		return nil
	}
	return append(append([]Warning(nil), c.head...), c.warns.warnings()...)
}

// Files returns the files read, in order (empty when none).
func (c *FlinkConfig) Files() []string {
	if c == nil {
		return nil
	}
	return append([]string(nil), c.files...)
}

// Set sets key to value (a plain string, as a legacy file or -D gives it), replacing any earlier entry.
// It is how -D overrides are applied.
func (c *FlinkConfig) Set(key, value string, src Source) {
	if c.values == nil {
		c.values = make(map[string]FlinkValue)
	}
	c.values[key] = FlinkValue{Key: key, Value: value, Source: src}
	delete(c.flinkStrings, key)
}

func (c *FlinkConfig) put(v FlinkValue) {
	if c.values == nil {
		c.values = make(map[string]FlinkValue)
	}
	c.values[v.Key] = v
}

// warn records a warning; many with the same format in one file are folded.
func (c *FlinkConfig) warn(src Source, format string, args ...any) {
	c.warnings().addf(format, "", src, format, args...)
}

func (c *FlinkConfig) warnings() *warnList {
	if c.warns == nil {
		c.warns = newWarnList(c.maxWarnings)
	}
	return c.warns
}

// FlinkOptions tells LoadFlink where to find Flink's configuration.
type FlinkOptions struct {
	// Path is a configuration file or directory. "" means $FLINK_CONF_DIR, then $FLINK_HOME/conf; when
	// none of these names anything, the configuration is empty and LoadFlink returns no error.
	Path string
	// Dynamic holds "key=value" items from -D, applied last with Source{Flag: "-D key"}.
	Dynamic []string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Logger receives the load-time warnings; nil discards them.
	Logger *slog.Logger
	// Limits bound the file read (MaxFileBytes), the distinct keys of a flink-conf.yaml
	// (MaxProperties) and the warnings kept (MaxWarnings); zero fields take the defaults.
	Limits Limits
}

// LoadFlink reads Flink's configuration as Flink does and applies the -D overrides.
//
// Path may be a file or a directory. A file named flink-conf.yaml is read with Flink's legacy line
// parser; a file with any other name is read as standard YAML (config.yaml). In a directory,
// flink-conf.yaml wins when present, as in Flink 1.x, with a warning that Flink 2.x reads only
// config.yaml (yarn-er cannot tell which Flink version will read the directory; the warning says
// config.yaml is ignored when both are there); otherwise config.yaml is read. A Path that is named
// (or comes from FLINK_CONF_DIR / FLINK_HOME) but does not exist is an error; a directory with
// neither file yields an empty configuration and a warning. Warnings are kept (Warnings) and logged,
// repeats folded and at most opts.Limits.MaxWarnings distinct ones. Only a regular file of at most
// opts.Limits.MaxFileBytes is read (a config.yaml of at most 512 KiB, see ParseFlinkYAML): a FIFO or
// a device (/dev/zero) is an error wrapping ErrNotRegular, a larger file one wrapping ErrLimit.
func LoadFlink(opts FlinkOptions) (*FlinkConfig, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	path, origin, err := resolveFlinkPath(opts.Path, getenv)
	if err != nil {
		return nil, err
	}
	cfg := &FlinkConfig{}
	if path != "" {
		var loaded *FlinkConfig
		loaded, err = loadFlinkPath(path, origin, opts.Limits.withDefaults())
		if err != nil {
			return nil, err
		}
		cfg = loaded
	}
	if err := cfg.applyDynamic(opts.Dynamic); err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings() {
		logger.Warn(w.Message, "source", w.Source.String())
	}
	return cfg, nil
}

// resolveFlinkPath picks the configuration path: the named one, else $FLINK_CONF_DIR, else
// $FLINK_HOME/conf. origin names where the path came from (--flink-conf, FLINK_CONF_DIR or
// FLINK_HOME), for the error about a missing one; "" means nothing was configured.
func resolveFlinkPath(p string, getenv func(string) string) (path, origin string, err error) {
	if p != "" {
		return p, "--flink-conf", nil
	}
	if d := getenv("FLINK_CONF_DIR"); d != "" {
		return d, "FLINK_CONF_DIR", nil
	}
	if h := getenv("FLINK_HOME"); h != "" {
		return filepath.Join(h, "conf"), "FLINK_HOME", nil
	}
	return "", "", nil
}

func loadFlinkPath(path, origin string, lim Limits) (*FlinkConfig, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &Error{
				Source: Source{File: path},
				Err:    fmt.Errorf("Flink configuration path (from %s) does not exist", origin),
				Fix:    "point --flink-conf (or FLINK_CONF_DIR / FLINK_HOME) at Flink's conf directory or at its flink-conf.yaml / config.yaml",
			}
		}
		return nil, &Error{Source: Source{File: path}, Err: err, Fix: unreadableFix(err, "make the Flink configuration readable")}
	}
	if !fi.IsDir() {
		return readFlinkFile(path, lim)
	}
	legacy := filepath.Join(path, FlinkLegacyFile)
	standard := filepath.Join(path, FlinkYAMLFile)
	hasLegacy, err := present(legacy)
	if err != nil {
		return nil, err
	}
	hasStandard, err := present(standard)
	if err != nil {
		return nil, err
	}
	switch {
	case hasLegacy:
		cfg, err := readFlinkFile(legacy, lim)
		if err != nil {
			return nil, err
		}
		w := Warning{
			Source:  Source{File: legacy},
			Message: "read in the legacy format, as Flink 1.x does; Flink 2.x reads only " + FlinkYAMLFile + " (fix: before upgrading, convert it with Flink's bin/migrate-config-file.sh)",
		}
		if hasStandard {
			w = Warning{
				Source:  Source{File: standard},
				Message: "ignored: " + FlinkLegacyFile + " is present in the same directory and Flink 1.x reads it instead; Flink 2.x reads only " + FlinkYAMLFile + " (fix: keep one of the two; migrate with Flink's bin/migrate-config-file.sh and remove " + FlinkLegacyFile + ")",
			}
		}
		cfg.head = append([]Warning{w}, cfg.head...)
		return cfg, nil
	case hasStandard:
		return readFlinkFile(standard, lim)
	default:
		cfg := &FlinkConfig{}
		cfg.warn(Source{File: path}, "no %s or %s in this directory; using an empty Flink configuration (fix: point --flink-conf at Flink's conf directory)", FlinkYAMLFile, FlinkLegacyFile)
		return cfg, nil
	}
}

// present reports whether something exists at path. Whatever it is counts, a directory too, as it
// does for Flink, which then fails to read it: reading it refuses what is not a regular file.
func present(path string) (bool, error) {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, &Error{Source: Source{File: path}, Err: err, Fix: unreadableFix(err, "make the Flink configuration readable")}
	}
	return true, nil
}

func readFlinkFile(path string, lim Limits) (*FlinkConfig, error) {
	data, err := readRegular(path, lim.MaxFileBytes, lim.RaiseHint)
	if err != nil {
		return nil, err
	}
	var cfg *FlinkConfig
	if filepath.Base(path) == FlinkLegacyFile {
		cfg, err = parseFlinkLegacy(path, data, lim)
	} else {
		cfg, err = ParseFlinkYAML(path, data)
	}
	if cfg != nil && cfg.maxWarnings == 0 {
		cfg.maxWarnings = lim.MaxWarnings
	}
	return cfg, err
}

// applyDynamic applies -D key=value items in order, as Flink's CLI does.
func (c *FlinkConfig) applyDynamic(items []string) error {
	for _, item := range items {
		key, value, ok := strings.Cut(item, "=")
		flag := "-D " + item
		if !ok {
			return &Error{
				Source: Source{Flag: flag},
				Err:    errors.New("dynamic property has no '='"),
				Fix:    "write it as -D key=value, e.g. -D external-resources=gpu",
			}
		}
		if strings.TrimSpace(key) == "" {
			return &Error{
				Source: Source{Flag: flag},
				Err:    errors.New("dynamic property has an empty key"),
				Fix:    "write it as -D key=value with a non-empty key, e.g. -D external-resource.gpu.amount=1",
			}
		}
		c.Set(key, value, Source{Flag: "-D " + key})
	}
	return nil
}

// FlinkString returns key's value as Flink 2.x renders it with Configuration.getString. It differs
// from Get only for plain config.yaml scalars the YAML 1.2 core schema types: integers (0700 → "700",
// 0x1F → "31"), floats (1.10 → "1.1", 1e7 → "1.0E7") and booleans (True → "true"). It returns "" when
// key is absent.
func (c *FlinkConfig) FlinkString(key string) string {
	if c == nil {
		return ""
	}
	if s, ok := c.flinkStrings[key]; ok {
		return s
	}
	return c.Get(key)
}
