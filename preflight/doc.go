// Package preflight checks, before a Flink job is submitted, that its external resources (GPUs,
// FPGAs, any custom YARN resource type) will really reach the TaskManagers on Hadoop YARN. It
// combines Flink's configuration (conf, profile), Hadoop's configuration files and, when a
// ResourceManager is known, the live cluster (yarn), and turns every quiet failure the users of
// Flink, Spark, Skein and TonY report into a named check: a resource type the ResourceManager does
// not know and silently drops, a scheduler that ignores GPUs, no NodeManager advertising them, a
// request above the maximum allocation, a discovery script that is missing or never turns
// coordination on.
//
// Run evaluates every check and returns a Report: a list of Check values whose IDs (the constants
// ID*) are a public contract. Every ID appears in every report: a check that finds problems
// reports one entry per problem (each with its own source, "file:line", "-D key" or the RM URL), a
// check that finds none reports one pass entry, and a check that cannot run (no Hadoop
// configuration, no ResourceManager, FLINK_HOME unknown) reports one skip entry saying why.
// Entries come in the order of IDs(): Flink configuration, Hadoop configuration, live cluster,
// security.
//
// The checks are a table (checkTable in checks.go): each row is an id, its area and a function
// that looks at the facts Run gathers once (Flink's translation, the Hadoop configuration, the
// ResourceManager's answers) and reports that check's entries. The table's order is the report's
// and docs/preflight.md's. Messages name their subject (Flink's TaskManagers, or the containers of
// Input.Container) from the facts.
//
// The package never prints, never exits and makes network calls only through the *yarn.Client it
// is given, with the caller's context.
package preflight
