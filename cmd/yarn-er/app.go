package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"golang.org/x/term"
)

// Streams are the standard streams a command reads and writes. Tests inject buffers.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// isTerminalReader reports whether r is a terminal.
func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// app is what every command shares: streams, the environment, global options, the logger and yarn-er's
// own settings (flags > YARN_ER_* environment > --config file > defaults).
type app struct {
	streams  Streams
	args     []string
	getenv   func(string) string
	settings *viper.Viper
	logger   *slog.Logger

	output    string
	verbose   bool
	logLevel  string
	logFormat string
	config    string
}

// envPrefix is the prefix of the environment variables that override yarn-er's settings.
const envPrefix = "YARN_ER"

func newApp(streams Streams, getenv func(string) string) *app {
	return &app{streams: streams, getenv: getenv, settings: viper.New(), logger: slog.New(slog.DiscardHandler)}
}

// setup runs before every command: it fills each flag the command line did not set from the
// environment (YARN_ER_<FLAG>) or else from the --config file, validates the global flags and builds
// the logger. Commands then read their flags only.
func (a *app) setup(cmd *cobra.Command) error {
	if a.config != "" {
		a.settings.SetConfigFile(a.config)
		if err := a.settings.ReadInConfig(); err != nil {
			return usageErrorf("--config %s: %v (fix: give a YAML, JSON or TOML file whose keys are flag names)", a.config, err)
		}
	}
	var firstErr error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Changed || f.Name == "help" || f.Name == "config" || firstErr != nil {
			return
		}
		env := envName(f.Name)
		if val := a.getenv(env); val != "" {
			if err := setFlagFromSetting(f, val); err != nil {
				firstErr = usageErrorf("%s=%q: %v", env, val, err)
			}
			return
		}
		if a.config != "" && a.settings.InConfig(f.Name) {
			if err := setFlagFromSetting(f, a.settings.Get(f.Name)); err != nil {
				firstErr = usageErrorf("--config %s: key %q: %v", a.config, f.Name, err)
			}
		}
	})
	if firstErr != nil {
		return firstErr
	}
	switch a.output {
	case "table", "json", "yaml":
	default:
		return usageErrorf("--output %q: want table, json or yaml", a.output)
	}
	return a.setupLogger()
}

// envName is the environment variable that overrides a flag: YARN_ER_ and the flag's name in upper
// case with '-' and '.' as '_' (--hadoop-conf: YARN_ER_HADOOP_CONF).
func envName(flag string) string {
	return envPrefix + "_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(flag))
}

func (a *app) setupLogger() error {
	level := slog.LevelWarn
	if a.logLevel != "" {
		if err := level.UnmarshalText([]byte(a.logLevel)); err != nil {
			return usageErrorf("--log-level %q: want debug, info, warn or error", a.logLevel)
		}
	}
	if a.verbose {
		level = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: level}
	switch a.logFormat {
	case "", "text":
		a.logger = slog.New(slog.NewTextHandler(a.streams.Err, opts))
	case "json":
		a.logger = slog.New(slog.NewJSONHandler(a.streams.Err, opts))
	default:
		return usageErrorf("--log-format %q: want text or json", a.logFormat)
	}
	return nil
}

// setFlagFromSetting sets a flag from a value found in the environment or the --config file.
// Lists from a YAML file become repeated values.
func setFlagFromSetting(f *pflag.Flag, val any) error {
	if list, ok := val.([]any); ok {
		for _, item := range list {
			if err := f.Value.Set(fmt.Sprint(item)); err != nil {
				return err
			}
		}
		return nil
	}
	return f.Value.Set(fmt.Sprint(val))
}

// Main runs yarn-er with args and returns the process exit code.
func Main(ctx context.Context, args []string, streams Streams, getenv func(string) string) int {
	a := newApp(streams, getenv)
	a.args = args
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	return a.reportError(root, err)
}
