package preflight

import (
	"fmt"
	"regexp"
	"strconv"
)

// HadoopVersion is the numeric head of a Hadoop version string.
type HadoopVersion struct {
	Major, Minor, Patch int
}

// String renders "major.minor.patch".
func (v HadoopVersion) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Less reports whether v is older than o.
func (v HadoopVersion) Less(o HadoopVersion) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor < o.Minor
	}
	return v.Patch < o.Patch
}

var hadoopVersionRE = regexp.MustCompile(`^\s*v?(\d{1,9})\.(\d{1,9})(?:\.(\d{1,9}))?`)

// ParseHadoopVersion reads the leading major.minor[.patch] of a Hadoop version as the RM reports it
// (hadoopVersion of /ws/v1/cluster/info): "3.5.0", "3.1.1.3.1.0.0-78" (HDP), "3.0.0-cdh6.3.2",
// "3.3.6-amzn-1", "3.4.0-SNAPSHOT". Anything after the patch number is ignored.
func ParseHadoopVersion(s string) (HadoopVersion, error) {
	m := hadoopVersionRE.FindStringSubmatch(s)
	if m == nil {
		return HadoopVersion{}, fmt.Errorf("%q is not a Hadoop version (want major.minor[.patch], e.g. 3.3.6)", s)
	}
	var v HadoopVersion
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	if m[3] != "" {
		v.Patch, _ = strconv.Atoi(m[3])
	}
	return v, nil
}
