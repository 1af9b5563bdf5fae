// Package cmdutil is what yarn-er's commands share: the Factory (streams, environment, logger,
// settings, output rendering), the flag groups several commands register (Flink, Hadoop and
// ResourceManager flags, with the lazily built Hadoop configuration and RM client), and the one
// mapping from errors to exit codes.
//
// Commands live in cmd/internal/commands/<name>: each has an options struct embedding Base, NewCmdX(f, runF)
// that binds flags to the options and sets RunE to RunE(opts, runF, xRun) (runF, when set, receives
// the options instead of xRun: flag tests need no ResourceManager), and xRun(opts) that does the
// work. WatchSignals gives main its context: SIGINT and SIGTERM end every command, 130 and 143.
package cmdutil
