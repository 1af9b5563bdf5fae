// Package yarn is a client for the Hadoop YARN ResourceManager REST API (/ws/v1/cluster).
//
// It reads the cluster (info, metrics, nodes, scheduler and queues, the scheduler overview with its
// effective allocations, applications and their attempts, the RM's effective configuration),
// creates and submits applications, and kills them. It is meant
// for tools that must know exactly what YARN offers before asking for GPUs, FPGAs or any other
// custom resource type, so it is strict about numbers and tolerant about JSON shapes:
//
//   - Every resource quantity is an int64 in the unit Hadoop reports (memory-mb in Mi, vcores and
//     most devices unit-less). Numbers are never decoded through float64, so
//     9223372036854775807 (Long.MAX_VALUE, Hadoop's "no limit") survives.
//   - Units are converted and compared exactly with package records (records.Quantity.Cmp, .In,
//     Resources.Add), the project's single implementation of Hadoop's UnitsConversionUtil.
//   - Hadoop 3.1 to 3.5 are understood: Jersey 1 and Jersey 2 output (a single object where a list
//     is expected and the reverse, a root element kept or dropped), null wrappers such as
//     {"apps":null}, missing fields, and a node's total resource missing in 3.1 (then total is
//     used plus available). Queue trees are normalised across schedulers: every Queue has its
//     full Path and its own Name (the FairScheduler reports the path as the name).
//
// The client finds the active ResourceManager of an HA pair itself. It takes plain options and
// never reads a Hadoop configuration: the caller resolves Options.Addresses (and RMIDs, HTTPS,
// Kerberos) from its flags or from package conf (conf.HadoopConfig.RMWebAddresses applies
// yarn.resourcemanager.webapp.address, its https variant chosen by yarn.http.policy, and the
// per-rm-id keys under yarn.resourcemanager.ha.rm-ids). A standby's 307 redirect makes the client look for the active
// RM again; a request with a body is re-sent only because a 307 proves the standby did not act on
// it. "No active RM right now" is retried with backoff until Options.Retry.FailoverTimeout.
//
// Authentication is Hadoop's simple scheme (?user.name=, the user from Options.User,
// $HADOOP_USER_NAME or the operating-system user, never an anonymous dr.who) or Kerberos SPNEGO
// (keytab or credential cache, with the hadoop.auth cookie kept between requests). TLS accepts a
// custom CA and client certificates. Authorization headers, cookies and tokens never reach a log.
//
// Errors from the RM become *records.RemoteError values that keep Hadoop's exception, Java class and
// message; test them with errors.Is against ErrNotFound, ErrForbidden, ErrUnauthorized,
// ErrBadRequest, ErrRESTSubmissionDisabled and the other sentinels.
package yarn
