package preflight

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/yarn"
)

// The application settings the ResourceManager silently caps, the RM keys that cap them (with
// Hadoop's defaults) and the Flink options that ask for them.
const (
	// keyAMMaxAttempts is the ApplicationMaster attempts an application gets when it asks for none
	// (or for fewer than 1), and the cap when keyAMGlobalMaxAttempts is not set.
	keyAMMaxAttempts = "yarn.resourcemanager.am.max-attempts"
	// keyAMGlobalMaxAttempts is the cap of the attempts an application may ask for (Hadoop 3.2+;
	// unset: keyAMMaxAttempts).
	keyAMGlobalMaxAttempts = "yarn.resourcemanager.am.global.max-attempts"
	defaultAMMaxAttempts   = 2
	// keyMaxAppPriority is the CapacityScheduler's highest application priority.
	keyMaxAppPriority     = "yarn.cluster.max-application-priority"
	defaultMaxAppPriority = 0

	// keyFlinkAttempts and keyFlinkPriority are Flink's YarnConfigOptions APPLICATION_ATTEMPTS
	// (no default: 1, or 2 with high availability) and APPLICATION_PRIORITY (default -1: not set).
	keyFlinkAttempts = "yarn.application-attempts"
	keyFlinkPriority = "yarn.application.priority"
	// keyFlinkHAMode is HighAvailabilityOptions.HA_MODE (default NONE).
	keyFlinkHAMode = "high-availability.type"
)

// asked is an application setting the submission asks for.
type asked struct {
	// set: something is asked for (else the RM's or the queue's default applies).
	set   bool
	value int64
	// what names the request in messages: "--max-attempts 3", "yarn.application-attempts = 3".
	what string
	// src is the source of the entries ("" : the RM's /conf).
	src string
	// ask renders how to ask for n instead ("--priority 0", "yarn.application.priority: 0").
	ask func(n int64) string
	// invalid, when set, is why Flink's client cannot read the value: it fails the deployment.
	invalid string
}

// liveSkipReason says why the live checks cannot run; "" when the RM answered.
func (f *facts) liveSkipReason() string {
	switch {
	case f.live == nil:
		if f.in.NoClientReason != "" {
			return f.in.NoClientReason
		}
		return "no ResourceManager known: give --rm URL, or a Hadoop configuration with yarn.resourcemanager.webapp.address"
	case f.live.infoErr != nil:
		return "the ResourceManager is not reachable (see " + IDClusterReachable + ")"
	}
	return ""
}

// askedAttempts returns the ApplicationMaster attempts asked for: Input.MaxAttempts for a
// container given directly; else what Flink's YarnClusterDescriptor sets, yarn.application-attempts,
// or when it is not set 2 with high availability and 1 without.
func (f *facts) askedAttempts() asked {
	if f.in.Container != nil {
		n := int64(f.in.MaxAttempts)
		return asked{set: n != 0, value: n, what: fmt.Sprintf("--max-attempts %d", n),
			ask: func(n int64) string { return fmt.Sprintf("--max-attempts %d", n) }}
	}
	ask := func(n int64) string { return fmt.Sprintf("%s: %d", keyFlinkAttempts, n) }
	if v, ok := f.in.Flink.Lookup(keyFlinkAttempts); ok {
		text := f.in.Flink.FlinkString(keyFlinkAttempts)
		a := asked{set: true, what: fmt.Sprintf("%s = %s", keyFlinkAttempts, text), src: v.Source.String(), ask: ask}
		n, err := strconv.ParseInt(text, 10, 32)
		if err != nil {
			a.invalid = fmt.Sprintf("%s = %s: Flink's client cannot read it as an int (\"Could not parse value '%s' for key '%s'.\") and fails before it submits anything", keyFlinkAttempts, text, text, keyFlinkAttempts)
			return a
		}
		a.value = n
		return a
	}
	if on, key, value, src := flinkHA(f.in.Flink); on {
		return asked{set: true, value: 2, src: src, ask: ask,
			what: fmt.Sprintf("%s is not set and high availability is on (%s = %s), so Flink asks for 2 attempts", keyFlinkAttempts, key, value)}
	}
	return asked{set: true, value: 1, ask: ask, what: fmt.Sprintf("%s is not set and high availability is off, so Flink asks for 1 attempt", keyFlinkAttempts)}
}

// flinkHA reports whether Flink's high availability is on (HighAvailabilityMode
// .isHighAvailabilityModeActivated): HA_MODE (high-availability.type, else its deprecated keys) set
// to anything but NONE (any case) or the old default "standalone" — ZOOKEEPER, KUBERNETES or a
// factory class. It returns the key that decides, its value and source.
func flinkHA(fc *conf.FlinkConfig) (on bool, key, value, src string) {
	// HA_MODE's deprecated keys come after it, in this order.
	for _, k := range []string{keyFlinkHAMode, "recovery.mode", "high-availability"} {
		v, ok := fc.Lookup(k)
		if !ok {
			continue
		}
		text := fc.FlinkString(k)
		off := strings.EqualFold(text, "standalone") || strings.ToUpper(text) == "NONE"
		return !off, k, text, v.Source.String()
	}
	return false, "", "", ""
}

// askedPriority returns the application priority asked for: Input.Priority for a container given
// directly; else Flink's yarn.application.priority, which Flink sends only when it is 0 or more.
func (f *facts) askedPriority() asked {
	if f.in.Container != nil {
		ask := func(n int64) string { return fmt.Sprintf("--priority %d", n) }
		if f.in.Priority == nil {
			return asked{what: "no --priority", ask: ask}
		}
		n := int64(*f.in.Priority)
		return asked{set: true, value: n, what: fmt.Sprintf("--priority %d", n), ask: ask}
	}
	ask := func(n int64) string { return fmt.Sprintf("%s: %d", keyFlinkPriority, n) }
	v, ok := f.in.Flink.Lookup(keyFlinkPriority)
	if !ok {
		return asked{what: keyFlinkPriority + " is not set", ask: ask}
	}
	text := f.in.Flink.FlinkString(keyFlinkPriority)
	a := asked{what: fmt.Sprintf("%s = %s", keyFlinkPriority, text), src: v.Source.String(), ask: ask}
	n, err := strconv.ParseInt(text, 10, 32)
	if err != nil {
		a.invalid = fmt.Sprintf("%s = %s: Flink's client cannot read it as an int (\"Could not parse value '%s' for key '%s'.\") and fails before it submits anything", keyFlinkPriority, text, text, keyFlinkPriority)
		return a
	}
	a.value, a.set = n, n >= 0
	if !a.set {
		a.what += " (negative: Flink sets no priority)"
	}
	return a
}

// invalidFlinkValue fails the check for a Flink value its client cannot read.
func (f *facts) invalidFlinkValue(out *results, key string, a asked) {
	out.fail(a.src, fmt.Sprintf("set %s to a whole number, or remove it", key), "%s", a.invalid)
}

// rmSetting is an int of the RM's effective configuration.
type rmSetting struct {
	key   string
	value int64
	// from says where the value comes from: "yarn-site.xml", or "not in /conf: Hadoop's default".
	from string
	// found: the key is in /conf.
	found bool
}

// String renders the setting for messages: "yarn.cluster.max-application-priority = 0
// (yarn-default.xml)".
func (s rmSetting) String() string {
	return fmt.Sprintf("%s = %d (%s)", s.key, s.value, s.from)
}

// confInt reads key of the RM's /conf as Hadoop's Configuration.getInt does (surrounding blanks
// trimmed, 0x for hexadecimal), def when it is absent or blank (Hadoop's XML loader drops an
// empty value).
func confInt(c *yarn.RMConf, key string, def int64) (rmSetting, error) {
	p, ok := c.Lookup(key)
	if !ok || conf.JavaTrim(p.Value) == "" {
		return rmSetting{key: key, value: def, from: "not in the ResourceManager's /conf: Hadoop's default"}, nil
	}
	from := p.Resource
	switch from {
	case "":
		from = "the ResourceManager's /conf"
	case "yarn-default.xml":
		from += ": Hadoop's default"
	}
	n, err := hadoopInt(p.Value)
	if err != nil {
		return rmSetting{}, fmt.Errorf("the ResourceManager's /conf gives %s = %q (from %s): %w", key, p.Value, from, err)
	}
	return rmSetting{key: key, value: n, from: from, found: true}, nil
}

// hadoopInt parses s like Hadoop's Configuration.getInt: trimmed, an optional '-' and "0x" or
// "0X" for hexadecimal, else Integer.parseInt; within int32.
func hadoopInt(s string) (int64, error) {
	t := conf.JavaTrim(s)
	neg := strings.HasPrefix(t, "-")
	u := strings.TrimPrefix(t, "-")
	base := 10
	if strings.HasPrefix(u, "0x") || strings.HasPrefix(u, "0X") {
		base, t = 16, u[2:]
		if neg {
			t = "-" + t
		}
	}
	n, err := strconv.ParseInt(t, base, 32)
	if err != nil {
		return 0, fmt.Errorf("not an int: %w", err)
	}
	return n, nil
}

// attemptsCap returns the cap of the attempts an application may ask for and the attempts of one
// that asks for none, as RMAppImpl reads them (Hadoop 3.2 to 3.5): the global key when set, else
// yarn.resourcemanager.am.max-attempts (default 2). The RM refuses to start with either below 1.
func attemptsCap(c *yarn.RMConf) (capped, unset rmSetting, err error) {
	if unset, err = confInt(c, keyAMMaxAttempts, defaultAMMaxAttempts); err != nil {
		return rmSetting{}, rmSetting{}, err
	}
	if unset.value < 1 {
		return rmSetting{}, rmSetting{}, fmt.Errorf("the ResourceManager's /conf gives %s: not a positive number", unset)
	}
	if capped, err = confInt(c, keyAMGlobalMaxAttempts, unset.value); err != nil {
		return rmSetting{}, rmSetting{}, err
	}
	if !capped.found {
		return unset, unset, nil
	}
	if capped.value < 1 {
		return rmSetting{}, rmSetting{}, fmt.Errorf("the ResourceManager's /conf gives %s: not a positive number", capped)
	}
	return capped, unset, nil
}

// capCheckable starts the check of the setting a (asked through flinkKey with a Flink
// configuration): it reports a value Flink cannot read, or a skip when the RM did not answer, and
// then returns false; else the source the check's entries name (the Flink file, or the RM's /conf).
func (f *facts) capCheckable(out *results, flinkKey string, a asked) (src string, ok bool) {
	if a.invalid != "" {
		f.invalidFlinkValue(out, flinkKey, a)
		return "", false
	}
	if reason := f.liveSkipReason(); reason != "" {
		out.skip("%s", reason)
		return "", false
	}
	if a.src != "" {
		return a.src, true
	}
	return f.live.rm + "/conf", true
}

// maxAttemptsCheck reports cluster.max-attempts: the ApplicationMaster attempts asked for
// (--max-attempts; Flink's yarn.application-attempts) must be within the RM's cap, which RMAppImpl
// applies silently: above yarn.resourcemanager.am.global.max-attempts (when set, else
// yarn.resourcemanager.am.max-attempts) the application gets the cap, below 1 it gets
// yarn.resourcemanager.am.max-attempts. Warn when the RM changes the request, pass when it keeps
// it; skip when the RM's /conf cannot be read.
func (f *facts) maxAttemptsCheck(_ context.Context, out *results) {
	a := f.askedAttempts()
	src, ok := f.capCheckable(out, keyFlinkAttempts, a)
	if !ok {
		return
	}
	live := f.live
	if live.rmConf == nil {
		out.skip("cannot read the ResourceManager's /conf (for %s): %v", keyAMMaxAttempts, live.confErr)
		return
	}
	capped, unset, err := attemptsCap(live.rmConf)
	if err != nil {
		out.skip("cannot tell the ResourceManager's cap of ApplicationMaster attempts: %v", err)
		return
	}
	raise := fmt.Sprintf("raise %s in yarn-site.xml on the ResourceManager and restart it", capped.key)
	switch {
	case !a.set:
		out.pass(src, "no ApplicationMaster attempts asked for: the ResourceManager gives %d (%s)", unset.value, unset)
	case a.value < 1:
		out.warn(src, fmt.Sprintf("ask for 1 to %d attempts (%s for one)", capped.value, a.ask(1)),
			"%s: the ResourceManager takes fewer than 1 ApplicationMaster attempt as none asked for and silently uses %s instead: the ApplicationMaster gets %s",
			a.what, unset, plural(int(unset.value), "attempt", "attempts"))
	case a.value > capped.value:
		fix := fmt.Sprintf("ask for at most %d (%s), or %s", capped.value, a.ask(capped.value), raise)
		then := ""
		if capped.value == 1 {
			then = ": a failed ApplicationMaster is not started again"
		}
		out.warn(src, fix,
			"%s, above the ResourceManager's cap %s: the ResourceManager silently uses %d instead, so the ApplicationMaster gets at most %s%s",
			a.what, capped, capped.value, plural(int(capped.value), "attempt", "attempts"), then)
	default:
		out.pass(src, "%s: within the ResourceManager's cap %s", a.what, capped)
	}
}

// schedulerKind returns the RM's scheduler and where that comes from: /ws/v1/cluster/scheduler,
// else the scheduler class of its /conf, else Hadoop 3's default, the CapacityScheduler. The kind
// is "" for a scheduler class yarn-er does not know (named in from).
func (f *facts) schedulerKind() (kind schedKind, from string) {
	live := f.live
	if live.sched != nil && kindOfType(live.sched.Type) != "" {
		return kindOfType(live.sched.Type), "/ws/v1/cluster/scheduler"
	}
	if live.rmConf != nil {
		if p, ok := live.rmConf.Lookup(keySchedulerClass); ok && strings.TrimSpace(p.Value) != "" {
			return kindOfClass(p.Value), fmt.Sprintf("%s = %s", keySchedulerClass, strings.TrimSpace(p.Value))
		}
	}
	return schedCapacity, "Hadoop's default scheduler"
}

// maxPriority returns the CapacityScheduler's highest application priority: from the RM's /conf,
// else from /ws/v1/cluster/scheduler-overview (Hadoop 3.4+), which reports the scheduler's value.
func (f *facts) maxPriority() (rmSetting, error) {
	live := f.live
	if live.rmConf != nil {
		return confInt(live.rmConf, keyMaxAppPriority, defaultMaxAppPriority)
	}
	if live.overview != nil {
		return rmSetting{key: keyMaxAppPriority, value: live.overview.ApplicationPriority, from: "the scheduler's value in " + pathOverview, found: true}, nil
	}
	return rmSetting{}, fmt.Errorf("cannot read the ResourceManager's /conf (for %s): %w", keyMaxAppPriority, live.confErr)
}

// priorityCheck reports cluster.priority: the application priority asked for (--priority; Flink's
// yarn.application.priority when 0 or more) must be one the scheduler keeps. The CapacityScheduler
// (checkAndGetApplicationPriority) silently lowers a priority above
// yarn.cluster.max-application-priority (default 0) to it; the FairScheduler and the FifoScheduler
// give every application priority 0. Warn when the RM changes the request, pass when it keeps it
// or none is asked for; skip when the cap cannot be read.
func (f *facts) priorityCheck(_ context.Context, out *results) {
	a := f.askedPriority()
	src, ok := f.capCheckable(out, keyFlinkPriority, a)
	if !ok {
		return
	}
	if !a.set {
		out.pass(src, "%s: the application gets the queue's default priority", a.what)
		return
	}
	kind, kindFrom := f.schedulerKind()
	switch kind {
	case schedFair, schedFifo:
		if a.value == 0 {
			out.pass(src, "%s: the %s gives every application priority 0 (from %s)", a.what, kind, kindFrom)
			return
		}
		out.warn(src, fmt.Sprintf("leave the priority out (only the CapacityScheduler orders applications by priority), or %s", a.ask(0)),
			"%s: the %s (from %s) does not support application priorities and silently gives every application priority 0 instead", a.what, kind, kindFrom)
		return
	case "":
		out.skip("%s is not a scheduler yarn-er knows: cannot tell what it does with application priorities", kindFrom)
		return
	}
	maxPrio, err := f.maxPriority()
	if err != nil {
		out.skip("cannot tell the cluster's highest application priority: %v", err)
		return
	}
	if a.value > maxPrio.value {
		out.warn(src,
			fmt.Sprintf("ask for at most %d (%s), or raise %s in yarn-site.xml on the ResourceManager and restart it", maxPrio.value, a.ask(maxPrio.value), keyMaxAppPriority),
			"%s, above the cluster's highest application priority %s: the CapacityScheduler silently uses priority %d instead",
			a.what, maxPrio, maxPrio.value)
		return
	}
	out.pass(src, "%s: within the cluster's highest application priority %s", a.what, maxPrio)
}
