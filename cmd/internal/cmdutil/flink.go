package cmdutil

import (
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/profile"
)

// FlinkFlags are the flags that say where Flink's configuration is and how to read it:
// --flink-conf, -D and --flink-version.
type FlinkFlags struct {
	// Path is --flink-conf: flink-conf.yaml, config.yaml or their directory.
	Path string
	// Dynamic are the -D key=value overrides, in order.
	Dynamic []string
	// Version is --flink-version: "1.x", "2.x" or a release such as "1.20.0"; empty means what
	// the configuration file implies.
	Version string
	// WarningsInOutput is set by a command that prints the load warnings in its own output: they
	// are then not logged as well (each finding once).
	WarningsInOutput bool
}

// AddFlinkFlags registers --flink-conf and -D/--dynamic on cmd, bound to fl.
func AddFlinkFlags(cmd *cobra.Command, fl *FlinkFlags) {
	fs := cmd.Flags()
	fs.StringVar(&fl.Path, "flink-conf", "",
		"Flink configuration: flink-conf.yaml, config.yaml or their directory (default $FLINK_CONF_DIR, then $FLINK_HOME/conf)")
	fs.StringArrayVarP(&fl.Dynamic, "dynamic", "D", nil,
		"override a Flink option, key=value, as Flink's CLI does (repeatable)")
	fs.StringVar(&fl.Version, "flink-version", "",
		"Flink rules where 1.x and 2.x differ (TaskManager memory): 1.x, 2.x or a release such as 1.20.0 (default: flink-conf.yaml means 1.x, config.yaml 2.x)")
	_ = cmd.MarkFlagFilename("flink-conf", "yaml", "yml")
}

// FlinkVersion returns the Flink rules of --flink-version, or those fc's file implies when the flag
// is not given. A version that does not parse is a usage error.
func (fl *FlinkFlags) FlinkVersion(fc *conf.FlinkConfig) (profile.FlinkVersion, error) {
	if fl.Version == "" {
		return profile.DefaultFlinkVersion(fc.Files()), nil
	}
	v, err := profile.ParseFlinkVersion(fl.Version)
	if err != nil {
		return profile.FlinkVersionUnset, Usagef("--flink-version: %w", err)
	}
	return v, nil
}

// LoadFlink reads Flink's configuration: the file or directory of --flink-conf, else
// $FLINK_CONF_DIR or $FLINK_HOME/conf, with the -D overrides applied last. With nothing configured
// at all it is a usage error. Errors name the file and line or the -D flag.
func (f *Factory) LoadFlink(fl *FlinkFlags) (*conf.FlinkConfig, error) {
	for _, item := range fl.Dynamic {
		if key, _, ok := strings.Cut(item, "="); !ok || strings.TrimSpace(key) == "" {
			return nil, Usagef("-D %s: want key=value, e.g. -D external-resources=gpu", item)
		}
	}
	fc, err := conf.LoadFlink(conf.FlinkOptions{
		Path:    fl.Path,
		Dynamic: fl.Dynamic,
		Getenv:  f.Env.Getenv,
		Logger:  f.loadLogger(fl.WarningsInOutput),
	})
	if err != nil {
		return nil, err
	}
	// Nothing read and nothing given: the user forgot to say where the configuration is. Going on
	// would check an empty configuration and report success.
	if len(fc.Files()) == 0 && len(fl.Dynamic) == 0 {
		where := "no --flink-conf given and neither FLINK_CONF_DIR nor FLINK_HOME is set"
		if ws := fc.Warnings(); len(ws) > 0 {
			where = ws[0].String()
		}
		return nil, Usagef("no Flink configuration found (%s): give --flink-conf with flink-conf.yaml, config.yaml or their directory, set FLINK_CONF_DIR or FLINK_HOME, or give the options with -D key=value", where)
	}
	return fc, nil
}

// loadLogger is the logger a configuration loader reports its warnings to: none when the command
// prints them in its output.
func (f *Factory) loadLogger(warningsInOutput bool) *slog.Logger {
	if warningsInOutput {
		return slog.New(slog.DiscardHandler)
	}
	return f.Logger()
}
