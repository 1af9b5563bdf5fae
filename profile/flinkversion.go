package profile

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/yarn-er/yarn-er/conf"
)

// FlinkVersion selects the rules of a Flink major version where Flink 1.x and 2.x differ: the
// legacy TaskManager heap options (taskmanager.heap.size, taskmanager.heap.mb) that Flink 1.x maps
// to the process size on YARN, and the legacy network buffers (taskmanager.network.numberOfBuffers),
// both removed in Flink 2.0.
type FlinkVersion int

// Flink versions whose rules yarn-er knows. The zero value means "not chosen": callers pick one with
// DefaultFlinkVersion.
const (
	// FlinkVersionUnset is the zero value: no version chosen.
	FlinkVersionUnset FlinkVersion = 0
	// Flink1 is Flink 1.x, checked against Flink 1.20.0.
	Flink1 FlinkVersion = 1
	// Flink2 is Flink 2.x, checked against Flink 2.0.0.
	Flink2 FlinkVersion = 2
)

// String returns "1.x" or "2.x" ("" when unset).
func (v FlinkVersion) String() string {
	switch v {
	case Flink1:
		return "1.x"
	case Flink2:
		return "2.x"
	}
	return ""
}

// MarshalText renders the version as String does.
func (v FlinkVersion) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// ParseFlinkVersion parses a --flink-version value: "1", "1.x", "2", "2.x", or a release such as
// "1.20", "1.20.0", "2.0.0". Flink 1 releases before 1.10 (the memory model this package follows)
// and majors other than 1 and 2 are errors.
func ParseFlinkVersion(s string) (FlinkVersion, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	major, rest, _ := strings.Cut(t, ".")
	bad := fmt.Errorf("flink version %q is not understood: give 1.x, 2.x or a release such as 1.20.0 or 2.0.0", s)
	var v FlinkVersion
	switch major {
	case "1":
		v = Flink1
	case "2":
		v = Flink2
	default:
		return FlinkVersionUnset, bad
	}
	if rest == "" || rest == "x" {
		return v, nil
	}
	minorText, patch, _ := strings.Cut(rest, ".")
	minor, err := strconv.Atoi(minorText)
	if err != nil || minor < 0 {
		return FlinkVersionUnset, bad
	}
	if patch != "" {
		if _, err := strconv.Atoi(strings.SplitN(patch, "-", 2)[0]); err != nil {
			return FlinkVersionUnset, bad
		}
	}
	if v == Flink1 && minor < 10 {
		return FlinkVersionUnset, fmt.Errorf("flink version %q predates Flink 1.10's TaskManager memory model, which yarn-er follows: give 1.x (1.10 or later) or 2.x", s)
	}
	return v, nil
}

// CodeConfigFileUnread: the rules chosen are Flink 2.x's but the configuration is a flink-conf.yaml,
// which Flink 2.x does not read: it fails to start ("The Flink config file '.../config.yaml' ...
// does not exist.").
const CodeConfigFileUnread = "flink.config-file-unread"

// checkConfigFile reports a flink-conf.yaml read under Flink 2.x rules.
func checkConfigFile(fc *conf.FlinkConfig, v FlinkVersion, l *problemList) {
	if v != Flink2 {
		return
	}
	for _, f := range fc.Files() {
		if filepath.Base(f) == conf.FlinkLegacyFile {
			l.add(SeverityError, CodeConfigFileUnread, conf.Source{File: f}, "",
				"point --flink-conf at the config.yaml Flink 2.x will read (convert this file with Flink's bin/migrate-config-file.sh), or choose --flink-version 1.x",
				"Flink 2.x reads only %s, never this %s: without %s it fails to start (\"The Flink config file '%s' ... does not exist.\"), and with one it uses that file instead",
				conf.FlinkYAMLFile, conf.FlinkLegacyFile, filepath.Join(filepath.Dir(f), conf.FlinkYAMLFile), filepath.Join(filepath.Dir(f), conf.FlinkYAMLFile))
		}
	}
}

// DefaultFlinkVersion returns the version the configuration files imply: a flink-conf.yaml means
// Flink 1.x (Flink 2.x does not read it); otherwise (config.yaml, any other standard YAML file, or
// no file at all) Flink 2.x rules apply.
func DefaultFlinkVersion(files []string) FlinkVersion {
	for _, f := range files {
		if filepath.Base(f) == conf.FlinkLegacyFile {
			return Flink1
		}
	}
	return Flink2
}
