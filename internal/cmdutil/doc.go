// Package cmdutil is what yarn-er's commands share: the Factory (streams, environment, logger,
// settings, output rendering), the flag groups several commands register (Flink, Hadoop and
// ResourceManager flags, with the lazily built Hadoop configuration and RM client), and the one
// mapping from errors to exit codes.
//
// Commands live in internal/cmd/<name>: each has an options struct, NewCmdX(f, runF) that binds
// flags to the options and calls runF (xRun when runF is nil), and xRun(opts) that does the work.
package cmdutil
