// Package amrm is a YARN ApplicationMaster's native Hadoop IPC client: the
// ApplicationMasterProtocol to the ResourceManager's scheduler (register, allocate, unregister) and
// the ContainerManagementProtocol to NodeManagers (start, stop, status). It is the only way to get
// containers with extended resources such as yarn.io/gpu: the ResourceManager's REST API cannot
// allocate containers beyond the AM.
//
// Authentication is SASL TOKEN/DIGEST-MD5: the AMRMToken from the container's token file
// ($HADOOP_TOKEN_FILE_LOCATION, read with CredentialsFromEnv) for the ResourceManager, and the
// NMTokens the ResourceManager hands out for NodeManagers. The quality of protection is negotiated
// as hadoop.rpc.protection asks: qop auth (authentication), auth-int (integrity: every message
// signed) or auth-conf with the rc4 cipher (privacy: every message signed and encrypted), the
// layers internal/ipc speaks. Only a server that offers none of these (auth-conf with other
// ciphers alone) is refused, with ErrUnsupportedQOP.
//
// A typical ApplicationMaster:
//
//	creds, err := amrm.CredentialsFromEnv()
//	rm, err := amrm.New(amrm.Config{SchedulerAddrs: []string{"rm:8030"}, Credentials: creds})
//	reg, err := rm.Register(ctx, amrm.RegisterRequest{RPCPort: -1})
//	err = rm.Ask(1, records.NewResources(1024, 1, records.Resource{Name: records.GPU, Value: 1}), 4)
//	nm, err := amrm.NewNMClient(amrm.NMConfig{Tokens: rm})
//	err = rm.Run(ctx, func(a *amrm.Allocation) (bool, error) {
//		for _, c := range a.Allocated {
//			_ = nm.StartContainer(ctx, c, amrm.NewLaunchContext("./worker"))
//		}
//		return allDone(a.Completed), nil
//	})
//	err = rm.Unregister(ctx, records.FinalSucceeded, "", "")
//
// Asks are absolute totals per priority (one priority per resource profile). Every allocated
// container is checked for the asked extended resources; one that lacks them is released and asked
// for again. After a ResourceManager restart or failover the client registers again and resends its
// asks and releases. When the RM refuses a heartbeat's responseId ("Invalid responseId in
// AllocateRequest ... expect responseId to be N but get M"), the client takes N from the message
// and sends the heartbeat once more with it and with every ask and unconfirmed release; an
// unreadable N or a second refusal is returned (ErrInvalidRequest). Response ids wrap from
// 2147483647 to 0 as the RM counts them. Remote exceptions are *records.RemoteError values keeping the Java class and
// message, matching the package's sentinels (ErrNotRegistered, ...) with errors.Is.
//
// The package imports only package records (shared YARN records) and the module's internal Hadoop
// IPC and protobuf packages.
package amrm
