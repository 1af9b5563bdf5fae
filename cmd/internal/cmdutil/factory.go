package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/yarn-er/yarn-er/internal/redact"
	"github.com/yarn-er/yarn-er/yarn"
)

// EnvPrefix is the prefix of the environment variables that override yarn-er's settings.
const EnvPrefix = "YARN_ER"

// Factory is what every command shares: the streams, the environment, the global flags (-o, -v,
// --log-level, --log-format, --config), the logger built from them and yarn-er's own settings
// (flag > YARN_ER_<FLAG> environment > settings file > default; the settings file is --config, else
// $YARN_ER_CONFIG, else $XDG_CONFIG_HOME/yarn-er/config.yaml when it exists). One Factory serves
// one run.
type Factory struct {
	// IO are the standard streams.
	IO *IOStreams
	// Env is the environment; commands read no other.
	Env Env
	// Build is what -ldflags stamped into the binary (main.version, main.commit, main.date).
	Build BuildStamp

	// Output is -o: table, json or yaml.
	Output string
	// Verbose is -v: debug logging.
	Verbose bool
	// LogLevel is --log-level: debug, info, warn or error.
	LogLevel string
	// LogFormat is --log-format: text or json.
	LogFormat string
	// ConfigFile is --config: yarn-er's settings file. After ApplySettings it is the file read, if
	// any (--config, YARN_ER_CONFIG or the default file).
	ConfigFile string

	settings *viper.Viper
	logger   *slog.Logger
}

// BuildStamp is the build information set at link time; empty fields are filled from the Go build
// information where it has them.
type BuildStamp struct {
	Version string
	Commit  string
	Date    string
}

// New returns a Factory on streams and env, logging nowhere until SetupLogger runs.
func New(streams *IOStreams, env Env) *Factory {
	return &Factory{IO: streams, Env: env, Output: OutputTable, settings: viper.New(), logger: slog.New(slog.DiscardHandler)}
}

// Logger is the logger of the run: discard until the command's flags are parsed, then what -v,
// --log-level and --log-format ask for, writing to stderr.
func (f *Factory) Logger() *slog.Logger { return f.logger }

// AddGlobalFlags registers -o, -v, --log-level, --log-format and --config on fs (the root's
// persistent flags).
func (f *Factory) AddGlobalFlags(cmd *cobra.Command) {
	pf := cmd.PersistentFlags()
	pf.StringVarP(&f.Output, "output", "o", OutputTable, "output format: table, json or yaml")
	pf.BoolVarP(&f.Verbose, "verbose", "v", false, "log debug messages to stderr")
	pf.StringVar(&f.LogLevel, "log-level", "warn", "log level: debug, info, warn or error")
	pf.StringVar(&f.LogFormat, "log-format", "text", "log format: text or json")
	pf.StringVar(&f.ConfigFile, "config", "", "yarn-er settings file (YAML, JSON or TOML; keys are flag names; default $YARN_ER_CONFIG, then $XDG_CONFIG_HOME/yarn-er/config.yaml or ~/.config/yarn-er/config.yaml when it exists)")
	_ = cmd.RegisterFlagCompletionFunc("output", FixedCompletion(OutputTable, OutputJSON, OutputYAML))
	_ = cmd.RegisterFlagCompletionFunc("log-level", FixedCompletion("debug", "info", "warn", "error"))
	_ = cmd.RegisterFlagCompletionFunc("log-format", FixedCompletion("text", "json"))
}

// ApplySettings runs before every command (the root's PersistentPreRunE): it fills each flag the
// command line did not set from the environment (YARN_ER_<FLAG>) or else from the settings file
// (--config, YARN_ER_CONFIG or the default file), validates the global flags and builds the
// logger; a key of the settings file that is no flag's name is a warning naming it. Commands then
// read their flags only.
func (f *Factory) ApplySettings(cmd *cobra.Command) error {
	file, origin, err := f.settingsFile(cmd)
	if err != nil {
		return err
	}
	if file != "" {
		f.ConfigFile = file
		f.settings.SetConfigFile(file)
		if err := f.settings.ReadInConfig(); err != nil {
			return Usagef("%s %s: %v (fix: give a YAML, JSON or TOML file whose keys are flag names)", origin, file, err)
		}
	}
	var firstErr error
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if fl.Changed || fl.Name == "help" || fl.Name == "config" || firstErr != nil {
			return
		}
		env := EnvName(fl.Name)
		if val := f.Env.Getenv(env); val != "" {
			if err := setFlagFromSetting(fl, val); err != nil {
				firstErr = Usagef("%s=%q: %v", env, val, err)
			}
			return
		}
		if f.ConfigFile != "" && f.settings.InConfig(fl.Name) {
			if err := setFlagFromSetting(fl, f.settings.Get(fl.Name)); err != nil {
				firstErr = Usagef("%s %s: key %q: %v", origin, f.ConfigFile, fl.Name, err)
			}
		}
	})
	if firstErr != nil {
		return firstErr
	}
	switch f.Output {
	case OutputTable, OutputJSON, OutputYAML:
	default:
		return Usagef("--output %q: want table, json or yaml", f.Output)
	}
	if err := f.SetupLogger(); err != nil {
		return err
	}
	if file != "" {
		known := flagNames(cmd.Root())
		for _, key := range f.settings.AllKeys() {
			if !known[key] {
				f.logger.Warn("unknown key in the settings file, ignored: keys are the names of yarn-er's flags, e.g. hadoop-conf",
					"file", file, "key", key)
			}
		}
	}
	return nil
}

// ConfigEnv is the environment variable naming yarn-er's settings file when --config is not given.
const ConfigEnv = EnvPrefix + "_CONFIG"

// settingsFile returns yarn-er's settings file and what named it: --config, else $YARN_ER_CONFIG,
// else the default $XDG_CONFIG_HOME/yarn-er/config.yaml (~/.config/yarn-er/config.yaml without
// XDG_CONFIG_HOME) when that file exists. A named file that is missing is an error when read; a
// missing default file means no settings.
func (f *Factory) settingsFile(cmd *cobra.Command) (file, origin string, err error) {
	if fl := cmd.Flags().Lookup("config"); f.ConfigFile != "" || (fl != nil && fl.Changed) {
		return f.ConfigFile, "--config", nil
	}
	if v := f.Env.Getenv(ConfigEnv); v != "" {
		return v, ConfigEnv, nil
	}
	def := DefaultSettingsFile(f.Env)
	if def == "" {
		return "", "", nil
	}
	st, err := os.Stat(def)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", "", nil
	case err != nil:
		return "", "", Usagef("settings file %s: %v", def, err)
	case !st.Mode().IsRegular():
		return "", "", Usagef("settings file %s: not a regular file (fix: remove it or make it a YAML file whose keys are flag names)", def)
	}
	return def, "settings file", nil
}

// DefaultSettingsFile is where yarn-er looks for its settings when neither --config nor
// YARN_ER_CONFIG names a file: $XDG_CONFIG_HOME/yarn-er/config.yaml, else
// $HOME/.config/yarn-er/config.yaml; "" when neither variable is set (or XDG_CONFIG_HOME is not an
// absolute path, which the XDG specification says to ignore, and HOME is unset).
func DefaultSettingsFile(env Env) string {
	if x := env.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "yarn-er", "config.yaml")
	}
	if h := env.Getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "yarn-er", "config.yaml")
	}
	return ""
}

// flagNames returns the name of every flag of cmd and its subcommands.
func flagNames(cmd *cobra.Command) map[string]bool {
	names := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		add := func(fl *pflag.Flag) { names[strings.ToLower(fl.Name)] = true }
		c.Flags().VisitAll(add)
		c.PersistentFlags().VisitAll(add)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cmd)
	return names
}

// EnvName is the environment variable that overrides a flag: YARN_ER_ and the flag's name in upper
// case with '-' and '.' as '_' (--hadoop-conf: YARN_ER_HADOOP_CONF).
func EnvName(flag string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(flag))
}

// SetupLogger builds the logger from -v, --log-level and --log-format. Commands that ignore the
// settings (discover) call it instead of ApplySettings.
func (f *Factory) SetupLogger() error {
	level := slog.LevelWarn
	if f.LogLevel != "" {
		if err := level.UnmarshalText([]byte(f.LogLevel)); err != nil {
			return Usagef("--log-level %q: want debug, info, warn or error", f.LogLevel)
		}
	}
	if f.Verbose {
		level = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: level}
	switch f.LogFormat {
	case "", "text":
		// The text handler quotes every value holding a control or bidi control (\x1b, \u202e).
		f.logger = slog.New(redact.Handler(slog.NewTextHandler(f.IO.ErrOut, opts)))
	case "json":
		// The JSON handler escapes the C0 controls only: the rest goes as \u escapes too.
		f.logger = slog.New(redact.Handler(slog.NewJSONHandler(invisibleEscaper{f.IO.ErrOut}, opts)))
	default:
		return Usagef("--log-format %q: want text or json", f.LogFormat)
	}
	return nil
}

// setFlagFromSetting sets a flag from a value found in the environment or the --config file.
// Lists from a YAML file become repeated values.
func setFlagFromSetting(fl *pflag.Flag, val any) error {
	if list, ok := val.([]any); ok {
		for _, item := range list {
			if err := fl.Value.Set(fmt.Sprint(item)); err != nil {
				return err
			}
		}
		return nil
	}
	return fl.Value.Set(fmt.Sprint(val))
}

// Render writes v to stdout in the format of -o; table writes the human form.
func (f *Factory) Render(v any, table func(w io.Writer) error) error {
	return Render(f.IO.Out, f.Output, v, table)
}

// ReportError prints err to stderr the way its kind asks for and returns the exit code. root and
// args find the command whose usage a usage error points to.
func (f *Factory) ReportError(root *cobra.Command, args []string, err error) int {
	code := ExitCode(err)
	var silent *SilentError
	if errors.As(err, &silent) {
		return code
	}
	// Every message passes the redaction layer (URLs with passwords, tokens in query strings and
	// library errors quoting file bytes never reach the terminal) and is escaped: an error quoting
	// the cluster carries no terminal control and no line of its own (ErrorText).
	msg := ErrorText(err)
	var deadline *yarn.DeadlineError
	if errors.As(err, &deadline) && !strings.Contains(msg, "--rm-timeout") {
		msg += " (--rm-timeout bounds the whole command, retries included: raise it with --rm-timeout)"
	}
	if (errors.Is(err, yarn.ErrTimeout) || errors.Is(err, context.DeadlineExceeded)) && !strings.Contains(msg, "--rm-timeout") {
		msg += " (the ResourceManager did not answer in time: set the timeout with --rm-timeout)"
	}
	if errors.Is(err, yarn.ErrUnreachable) {
		msg += " (no ResourceManager took the connection: check --rm, or yarn.resourcemanager.webapp.address" +
			" (with HA, yarn.resourcemanager.ha.rm-ids and webapp.address.<id>) in the Hadoop configuration, and that the ResourceManager runs)"
	}
	fmt.Fprintf(f.IO.ErrOut, "yarn-er: %s\n", msg)
	if code == ExitUsage {
		cmd, _, findErr := root.Find(args)
		if findErr != nil || cmd == nil {
			cmd = root
		}
		fmt.Fprintf(f.IO.ErrOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}
