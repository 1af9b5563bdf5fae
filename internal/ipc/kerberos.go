package ipc

import "context"

// Kerberos is the SASL KERBEROS method with the GSSAPI mechanism (RFC 4752) of a Kerberos login,
// as a Hadoop client with one speaks it. Package internal/ipc/gss implements it with gokrb5; as
// an interface it keeps the Kerberos library out of programs that authenticate with tokens or as
// a simple user only (yarn-er-am).
type Kerberos interface {
	// Check reports a login that cannot authenticate anywhere (no credentials, a service
	// principal that is not service/host[@REALM]); NewClient calls it.
	Check() error
	// Initiate checks the server's offer for a connection to addr, its principal announced as
	// protocol/serverID, and returns the exchange and its initial token.
	Initiate(ctx context.Context, addr, protocol, serverID string) (GSSExchange, []byte, error)
}

// GSSExchange is one connection's GSSAPI exchange after Kerberos.Initiate.
type GSSExchange interface {
	// Respond answers the server's challenge (its security-layer message).
	Respond(challenge []byte) ([]byte, error)
	// Established says whether the security layer has been chosen.
	Established() bool
	// Principal is the service principal authenticated to, for logs.
	Principal() string
	// SecurityLayer returns the chosen layer, nil for none (hadoop.rpc.protection =
	// authentication), and the largest payload of one wrapped message.
	SecurityLayer() (SecurityLayer, int, error)
}
