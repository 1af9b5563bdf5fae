// Package records holds the YARN records that yarn-er's packages hand to one another: application,
// attempt and container ids, application and container states, final statuses, local resources,
// tokens and credentials, resource names, and resource quantities and vectors with Hadoop's exact
// unit arithmetic.
//
// The package is a leaf: it imports no other yarn-er package, so the REST client (yarn), the IPC
// client (amrm) and the commands built on them share one definition of each record. Wire codecs
// stay with the clients (JSON shapes in yarn, protobuf conversions in amrm), with one exception:
// credentials.go reads and writes Hadoop's Credentials file formats (the Writable and protobuf
// token storage formats, and a token's URL-safe string), because a token file is a record the
// REST client, the IPC client, submit and the AM all hand to one another.
package records
