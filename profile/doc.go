// Package profile models YARN resources the way Hadoop's ResourceUtils does (resource names, units,
// resource types, minimum and maximum allocations, NodeManager resources) and translates Flink's
// external-resource configuration into the resource vector a Flink TaskManager container asks YARN for.
//
// The container's memory follows Flink's own memory model (DeriveTaskManagerMemory,
// DeriveJobManagerMemory: Flink's TaskExecutorProcessUtils, JobManagerProcessUtils and
// ProcessMemoryUtils, with 1.x or 2.x rules by FlinkVersion), checked against Flink 1.20.0 and 2.0.0
// by the golden suite under testdata/flink-golden (recorded by docker/flink-golden).
//
// Quantities are int64 in Hadoop units; nothing passes through a float. Unit conversion and
// comparison are exact: where Hadoop's own UnitsConversionUtil loses precision or wraps around
// (documented on Convert and Compare), this package gives the mathematically exact answer and reports
// an overflow with Hadoop's wording instead.
//
// Problems in configuration come back as Problem values, each with a stable Code (shared with the
// preflight checks), the conf.Source of the offending value, Hadoop's or Flink's wording where they
// have one, and a fix. Hard errors are *conf.Error values (errors.As) whose Err is a *CodedError.
package profile
