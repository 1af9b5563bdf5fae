package main

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/profile"
)

// flinkFlags are the flags that say where Flink's configuration is: --flink-conf and -D.
type flinkFlags struct {
	path    string
	dynamic []string
	version string
}

// addFlinkFlags registers --flink-conf and -D/--dynamic on cmd.
func addFlinkFlags(cmd *cobra.Command, f *flinkFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.path, "flink-conf", "",
		"Flink configuration: flink-conf.yaml, config.yaml or their directory (default $FLINK_CONF_DIR, then $FLINK_HOME/conf)")
	fl.StringArrayVarP(&f.dynamic, "dynamic", "D", nil,
		"override a Flink option, key=value, as Flink's CLI does (repeatable)")
	fl.StringVar(&f.version, "flink-version", "",
		"Flink rules where 1.x and 2.x differ (TaskManager memory): 1.x, 2.x or a release such as 1.20.0 (default: flink-conf.yaml means 1.x, config.yaml 2.x)")
	_ = cmd.MarkFlagFilename("flink-conf", "yaml", "yml")
}

// flinkVersion returns --flink-version, or the version fc's file implies.
func (f *flinkFlags) flinkVersion(fc *conf.FlinkConfig) (profile.FlinkVersion, error) {
	if f.version == "" {
		return profile.DefaultFlinkVersion(fc.Files()), nil
	}
	v, err := profile.ParseFlinkVersion(f.version)
	if err != nil {
		return profile.FlinkVersionUnset, usageErrorf("--flink-version: %v", err)
	}
	return v, nil
}

// load reads Flink's configuration: the file or directory of --flink-conf, else $FLINK_CONF_DIR or
// $FLINK_HOME/conf, with the -D overrides applied last. With nothing configured the configuration is
// empty. Errors name the file and line or the -D flag.
func (f *flinkFlags) load(a *app) (*conf.FlinkConfig, error) {
	for _, item := range f.dynamic {
		if key, _, ok := strings.Cut(item, "="); !ok || strings.TrimSpace(key) == "" {
			return nil, usageErrorf("-D %s: want key=value, e.g. -D external-resources=gpu", item)
		}
	}
	fc, err := conf.LoadFlink(conf.FlinkOptions{
		Path:    f.path,
		Dynamic: f.dynamic,
		Getenv:  a.getenv,
		Logger:  a.logger,
	})
	if err != nil {
		return nil, err
	}
	// Nothing read and nothing given: the user forgot to say where the configuration is. Going on
	// would check an empty configuration and report success.
	if len(fc.Files()) == 0 && len(f.dynamic) == 0 {
		where := "no --flink-conf given and neither FLINK_CONF_DIR nor FLINK_HOME is set"
		if ws := fc.Warnings(); len(ws) > 0 {
			where = ws[0].String()
		}
		return nil, usageErrorf("no Flink configuration found (%s): give --flink-conf with flink-conf.yaml, config.yaml or their directory, set FLINK_CONF_DIR or FLINK_HOME, or give the options with -D key=value", where)
	}
	return fc, nil
}

// hadoopFlags is the flag that says where Hadoop's configuration is: --hadoop-conf.
type hadoopFlags struct {
	dir string
}

// addHadoopFlags registers --hadoop-conf on cmd.
func addHadoopFlags(cmd *cobra.Command, f *hadoopFlags) {
	cmd.Flags().StringVar(&f.dir, "hadoop-conf", "",
		"Hadoop configuration directory with yarn-site.xml, resource-types.xml, ... (default $HADOOP_CONF_DIR, then $HADOOP_HOME/etc/hadoop)")
	_ = cmd.MarkFlagDirname("hadoop-conf")
}

// load reads Hadoop's configuration from --hadoop-conf, else $HADOOP_CONF_DIR or
// $HADOOP_HOME/etc/hadoop. It returns nil, nil when none of these is set.
func (f *hadoopFlags) load(a *app) (*conf.HadoopConfig, error) {
	hc, err := conf.LoadHadoop(conf.HadoopOptions{Dir: f.dir, Getenv: a.getenv, Logger: a.logger})
	if errors.Is(err, conf.ErrNotConfigured) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return hc, nil
}
