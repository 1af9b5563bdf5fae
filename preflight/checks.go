package preflight

import "context"

// checkFunc runs one check over the facts of a preflight and reports its entries to out (which
// gives every entry the check's id). It is the method expression of a check method,
// func (f *facts) fooCheck(ctx context.Context, out *results): ctx is first after the receiver,
// for the checks that ask the network (security.principals resolves host names). A check reports at least one entry: one per problem found, a
// pass entry when it finds none, or a skip entry saying why it cannot run. It reads the facts and
// never changes what another check sees.
type checkFunc func(f *facts, ctx context.Context, out *results)

// checkDef is one row of the table of checks.
type checkDef struct {
	// id is the check's id (one of the ID* constants), a public contract.
	id string
	// area is the group the report shows it in; the text of id before its first '.'.
	area Area
	// run is the check.
	run checkFunc
}

// checkTable is every check, in report order: the order of IDs(), of the report's entries and of
// docs/preflight.md (TestTableMatchesDocs). Adding a check is its id constant (report.go), a row
// here, its function, and its section in docs/preflight.md (CONTRIBUTING, "Adding a preflight
// check").
func checkTable() []checkDef {
	return []checkDef{
		{IDResourceNotListed, AreaFlink, (*facts).resourceNotListedCheck},
		{IDAmountInvalid, AreaFlink, (*facts).amountCheck},
		{IDNoYarnConfigKey, AreaFlink, (*facts).yarnConfigKeyCheck},
		{IDDuplicateConfigKey, AreaFlink, (*facts).duplicateConfigKeyCheck},
		{IDNoDriverFactory, AreaFlink, (*facts).driverFactoryCheck},
		{IDDiscoveryScript, AreaFlink, (*facts).discoveryScriptCheck},
		{IDGPUPluginJar, AreaFlink, (*facts).pluginJarCheck},
		{IDCoordinationArgs, AreaFlink, (*facts).coordinationArgsCheck},
		{IDTaskManagerResources, AreaFlink, (*facts).taskManagerResourcesCheck},

		{IDResourceTypesInvalid, AreaYarn, (*facts).resourceTypesCheck},
		{IDResourceTypeUndeclared, AreaYarn, (*facts).undeclaredCheck},
		{IDResourceTypeUnit, AreaYarn, (*facts).unitCheck},
		{IDCalculatorNotDominant, AreaYarn, (*facts).calculatorCheck},
		{IDMaxAllocationExceeded, AreaYarn, (*facts).maxAllocationCheck},
		{IDNMResources, AreaYarn, (*facts).nmResourcesCheck},
		{IDResourceProfiles, AreaYarn, (*facts).profilesCheck},
		{IDProfileMaxAllocation, AreaYarn, (*facts).profileMaxAllocationCheck},
		{IDDockerGPU, AreaYarn, (*facts).dockerCheck},
		{IDDockerRuntime, AreaYarn, (*facts).dockerRuntimeCheck},
		{IDMIGResources, AreaYarn, (*facts).migCheck},

		{IDClusterReachable, AreaCluster, (*facts).reachableCheck},
		{IDClusterVersion, AreaCluster, (*facts).versionCheck},
		{IDTypeUnknown, AreaCluster, (*facts).typeUnknownCheck},
		{IDNoNodeFits, AreaCluster, (*facts).noNodeFitsCheck},
		{IDCapacity, AreaCluster, (*facts).capacityCheck},
		{IDQueueMaxAllocation, AreaCluster, (*facts).queueCheck},
		{IDQueueCapacity, AreaCluster, (*facts).queueCapacityCheck},
		{IDNodeLabel, AreaCluster, (*facts).nodeLabelCheck},
		{IDMaxAttempts, AreaCluster, (*facts).maxAttemptsCheck},
		{IDPriority, AreaCluster, (*facts).priorityCheck},
		{IDPlacement, AreaCluster, (*facts).placementCheck},

		{IDLogin, AreaSecurity, (*facts).loginCheck},
		{IDPrincipals, AreaSecurity, (*facts).principalsCheck},
		{IDRPCProtection, AreaSecurity, (*facts).rpcProtectionCheck},
		{IDHTTPS, AreaSecurity, (*facts).httpsCheck},
		{IDSecureExecutor, AreaSecurity, (*facts).secureExecutorCheck},
	}
}

// needsFlink reports a check of Flink's configuration as not applicable when the container is
// given directly (Input.Container); it returns false then.
func (f *facts) needsFlink(out *results) bool {
	if f.in.Container != nil {
		out.notApplicable("the %s is given directly, not computed from a Flink configuration", f.containerName())
		return false
	}
	return true
}

// needsHadoop reports a skip saying why when there is no Hadoop configuration; it returns false
// then.
func (f *facts) needsHadoop(out *results, why string) bool {
	if f.in.Hadoop == nil {
		out.skip("%s", why)
		return false
	}
	return true
}

// needsLive reports a skip saying why when the ResourceManager is not known or did not answer;
// it returns false then.
func (f *facts) needsLive(out *results) bool {
	if f.live.usable() == nil {
		out.skip("%s", f.liveSkipReason())
		return false
	}
	return true
}
