// Package records holds the YARN records that yarn-er's packages hand to one another: application,
// attempt and container ids, application and container states, final statuses, local resources,
// tokens and credentials, resource names, and resource quantities and vectors with Hadoop's exact
// unit arithmetic.
//
// The package is a leaf: it imports no other yarn-er package, so the REST client (yarn), the IPC
// client (amrm) and the commands built on them share one definition of each record. Wire codecs
// (JSON shapes, protobuf conversions) stay with the clients.
package records
