package preflight

import (
	"bytes"
	"cmp"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/yarn-er/yarn-er/conf"
	"github.com/yarn-er/yarn-er/yarn"
)

// Scheduler keys and classes.
const (
	keySchedulerClass = "yarn.resourcemanager.scheduler.class"
	keyCalculator     = "yarn.scheduler.capacity.resource-calculator"
	keyFairAllocFile  = "yarn.scheduler.fair.allocation.file"

	capacitySchedulerFile = "capacity-scheduler.xml"
	defaultFairAllocFile  = "fair-scheduler.xml"

	// DominantCalculator is the resource calculator that schedules every resource type.
	DominantCalculator = "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"
	// DefaultCalculator is the CapacityScheduler's default calculator, which looks at memory only.
	DefaultCalculator = "org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator"
)

// schedKind is a scheduler implementation.
type schedKind string

const (
	schedCapacity schedKind = "CapacityScheduler"
	schedFair     schedKind = "FairScheduler"
	schedFifo     schedKind = "FifoScheduler"
)

// kindOfClass recognises a scheduler class name; "" for other classes.
func kindOfClass(class string) schedKind {
	class = strings.TrimSpace(class)
	for _, k := range []schedKind{schedCapacity, schedFair, schedFifo} {
		if class == string(k) || strings.HasSuffix(class, "."+string(k)) {
			return k
		}
	}
	return ""
}

// kindOfType recognises the scheduler type of /ws/v1/cluster/scheduler.
func kindOfType(t string) schedKind {
	switch t {
	case yarn.CapacityScheduler:
		return schedCapacity
	case yarn.FairScheduler:
		return schedFair
	case yarn.FifoScheduler:
		return schedFifo
	}
	return ""
}

// isDominant reports whether a calculator class is the DominantResourceCalculator (or a subclass
// named like it).
func isDominant(class string) bool {
	class = strings.TrimSpace(class)
	return class == DominantCalculator || strings.HasSuffix(class, ".DominantResourceCalculator") || class == "DominantResourceCalculator"
}

// setting is a configuration value with where it comes from.
type setting struct {
	value, source string
	found         bool
}

// calculatorCheck reports yarn.calculator-not-dominant: the scheduler must look at every resource
// type, not at memory only. The live RM (its /ws/v1/cluster/scheduler and /conf) overrides the
// files and says so; disagreements are noted.
func (f *facts) calculatorCheck(_ context.Context, out *results) {
	hc := f.in.Hadoop
	live := f.live.usable()
	if hc == nil && live == nil {
		out.skip("%s, and no ResourceManager known", noHadoop)
		return
	}
	var notes []string
	// Which scheduler: the live RM's /scheduler, else its /conf, else the files, else Hadoop 3's
	// default (the CapacityScheduler).
	var file, conf setting
	if hc != nil {
		if p, ok := hc.Lookup(keySchedulerClass); ok {
			file = setting{p.Value, p.Source.String(), true}
		}
	}
	if live != nil && live.rmConf != nil {
		if p, ok := live.rmConf.Lookup(keySchedulerClass); ok {
			conf = setting{p.Value, live.rm + "/conf", true}
		}
	}
	kind, kindFrom, kindSrc := schedCapacity, "Hadoop's default scheduler", ""
	switch {
	case live != nil && live.sched != nil && kindOfType(live.sched.Type) != "":
		kind, kindFrom, kindSrc = kindOfType(live.sched.Type), "the ResourceManager at "+live.rm, live.rm
	case conf.found:
		kind, kindFrom, kindSrc = kindOfClass(conf.value), conf.source, conf.source
	case file.found:
		kind, kindFrom, kindSrc = kindOfClass(file.value), file.source, file.source
	}
	if file.found && kindOfClass(file.value) != kind && kindSrc != file.source {
		notes = append(notes, fmt.Sprintf("%s at %s says %s, but %s runs the %s", keySchedulerClass, file.source, file.value, kindFrom, kind))
	}
	ext := len(f.extendedRequest()) > 0
	switch kind {
	case schedCapacity:
		f.capacityCalculator(out, kindSrc, ext, notes)
	case schedFair:
		f.fairPolicy(out, kindFrom, ext, notes)
	case schedFifo:
		f.calculatorFinding(out, ext, kindSrc, fmt.Sprintf("use the CapacityScheduler with %s=%s", keyCalculator, DominantCalculator),
			withNotes(fmt.Sprintf("the FifoScheduler (from %s) schedules by memory only: it ignores GPUs and other resource types", kindFrom), notes))
	default:
		out.skip("%s", withNotes(fmt.Sprintf("scheduler class %s (from %s) is not one yarn-er knows: cannot tell whether it schedules resource types", cmp.Or(conf.value, file.value), kindFrom), notes))
	}
}

// withNotes appends notes to a message.
func withNotes(msg string, notes []string) string {
	if len(notes) == 0 {
		return msg
	}
	return msg + " (" + strings.Join(notes, "; ") + ")"
}

// calculatorFinding reports a scheduler that ignores resource types: fail when resource types are
// requested, else warn.
func (f *facts) calculatorFinding(out *results, ext bool, source, fix, msg string) {
	if ext {
		out.fail(source, fix, "%s: containers come back without their GPUs/FPGAs", msg)
		return
	}
	out.warn(source, fix, "%s (nothing but memory and vcores is requested now)", msg)
}

// capacityCalculator checks yarn.scheduler.capacity.resource-calculator: from the RM's /conf when
// it shows it, else from capacity-scheduler.xml, where its absence means Hadoop's default,
// DefaultResourceCalculator.
func (f *facts) capacityCalculator(out *results, kindSrc string, ext bool, notes []string) {
	hc := f.in.Hadoop
	live := f.live.usable()
	var file, conf setting
	if hc != nil {
		if p, ok := hc.Lookup(keyCalculator); ok {
			file = setting{strings.TrimSpace(p.Value), p.Source.String(), true}
		} else if hc.HasFile(capacitySchedulerFile) {
			file = setting{DefaultCalculator, filepath.Join(hc.Dir(), capacitySchedulerFile), true}
			notes = append(notes, keyCalculator+" is not set in "+capacitySchedulerFile+", so it is Hadoop's default")
		}
	}
	if live != nil && live.rmConf != nil {
		if p, ok := live.rmConf.Lookup(keyCalculator); ok {
			conf = setting{strings.TrimSpace(p.Value), live.rm + "/conf", true}
		}
	}
	chosen := file
	if conf.found {
		chosen = conf
		if file.found && file.value != conf.value {
			notes = append(notes, fmt.Sprintf("the ResourceManager's /conf says %s, overriding %s at %s", conf.value, file.value, file.source))
		} else {
			notes = append(notes, "from the ResourceManager's /conf")
		}
	}
	fix := fmt.Sprintf("set %s=%s in capacity-scheduler.xml on the ResourceManager, then restart it (or yarn rmadmin -refreshQueues)", keyCalculator, DominantCalculator)
	if !chosen.found {
		where := "no Hadoop configuration"
		if hc != nil {
			where = capacitySchedulerFile + " is not in " + hc.Dir()
		}
		if live != nil {
			where += " and the ResourceManager's /conf does not show " + keyCalculator
		}
		if !ext {
			out.pass("", "%s", withNotes("the CapacityScheduler's calculator is unknown ("+where+"), but nothing besides memory and vcores is requested", notes))
			return
		}
		out.warn(kindSrc, "give --hadoop-conf the ResourceManager's configuration directory (with "+capacitySchedulerFile+"), or check "+keyCalculator+" there",
			"%s", withNotes("cannot tell the CapacityScheduler's resource calculator: "+where+"; without "+DominantCalculator+" GPUs are ignored", notes))
		return
	}
	if isDominant(chosen.value) {
		out.pass(chosen.source, "%s", withNotes("the CapacityScheduler uses "+chosen.value, notes))
		return
	}
	f.calculatorFinding(out, ext, chosen.source, fix,
		withNotes(fmt.Sprintf("the CapacityScheduler uses %s, which looks at memory only", chosen.value), notes))
}

// fairPolicy checks that the FairScheduler schedules with drf (DominantResourceFairnessPolicy):
// from the live RM's queues when it reports their policies (the queue the job goes to decides),
// else by reading its allocation file.
func (f *facts) fairPolicy(out *results, kindFrom string, ext bool, notes []string) {
	if f.liveFairPolicy(out, ext, notes) {
		return
	}
	hc := f.in.Hadoop
	if hc == nil {
		out.skip("%s", withNotes("the FairScheduler's policies are in its allocation file, and there is no Hadoop configuration to find it", notes))
		return
	}
	path, alloc, readErr, parseErr := f.fairAllocations()
	if readErr != nil {
		out.skip("%s", withNotes(fmt.Sprintf("the FairScheduler (from %s) needs defaultQueueSchedulingPolicy drf for GPUs, but its allocation file cannot be read: %v", kindFrom, readErr), notes))
		return
	}
	if parseErr != nil {
		out.warn(path, "fix the allocation file's XML", "%s", withNotes(fmt.Sprintf("cannot read the FairScheduler's allocation file: %v", parseErr), notes))
		return
	}
	fix := fmt.Sprintf("set <defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy> in %s", path)
	if !isDRF(alloc.DefaultPolicy) {
		shown := alloc.DefaultPolicy
		src := fmt.Sprintf("%s:%d", path, alloc.DefaultLine)
		if shown == "" {
			shown, src = "fair (the default)", path
		}
		f.calculatorFinding(out, ext, src, fix, withNotes(fmt.Sprintf("the FairScheduler's default queue policy is %s, which looks at memory only", shown), notes))
		return
	}
	bad := false
	for _, q := range alloc.Queues {
		if q.Policy != "" && !isDRF(q.Policy) {
			bad = true
			out.warn(fmt.Sprintf("%s:%d", path, q.Line),
				fmt.Sprintf("set <schedulingPolicy>drf</schedulingPolicy> for queue %s, or submit to a drf queue", q.Path),
				"queue %s of the FairScheduler uses policy %s, which ignores GPUs", q.Path, q.Policy)
		}
	}
	if !bad {
		out.pass(fmt.Sprintf("%s:%d", path, alloc.DefaultLine), "%s", withNotes("the FairScheduler schedules with drf", notes))
	}
}

// fairAllocationPath is the FairScheduler's allocation file: yarn.scheduler.fair.allocation.file
// (default fair-scheduler.xml), relative paths in the configuration directory. "" without a
// Hadoop configuration.
func (f *facts) fairAllocationPath() string {
	hc := f.in.Hadoop
	if hc == nil {
		return ""
	}
	path := defaultFairAllocFile
	if p, ok := hc.Lookup(keyFairAllocFile); ok && strings.TrimSpace(p.Value) != "" {
		path = strings.TrimSpace(p.Value)
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(hc.Dir(), path)
	}
	return path
}

// fairAllocations reads and parses the allocation file: readErr when it cannot be read (or there is
// no Hadoop configuration), parseErr when it is no valid allocation file.
func (f *facts) fairAllocations() (path string, alloc *FairAllocations, readErr, parseErr error) {
	path = f.fairAllocationPath()
	if path == "" {
		return "", nil, errors.New("no Hadoop configuration"), nil
	}
	data, readErr := conf.ReadConfigFile(path, 0) // regular files only, size-capped (docs/limits.md)
	if readErr != nil {
		return path, nil, readErr, nil
	}
	alloc, parseErr = ParseFairAllocations(path, data)
	return path, alloc, nil, parseErr
}

// liveFairPolicy judges the policy of the queue the job goes to (else the root queue) as the live
// FairScheduler reports it (schedulingPolicy of /ws/v1/cluster/scheduler). It returns false, and
// reports nothing, when the RM runs no FairScheduler or reports no policies.
func (f *facts) liveFairPolicy(out *results, ext bool, notes []string) bool {
	live := f.live.usable()
	if live == nil || live.sched == nil || kindOfType(live.sched.Type) != schedFair || live.sched.Root == nil {
		return false
	}
	var drfLeaves []string
	reported := false
	for _, q := range live.sched.Queues() {
		if q.SchedulingPolicy != "" {
			reported = true
		}
		if q.Leaf && isDRF(q.SchedulingPolicy) {
			drfLeaves = append(drfLeaves, q.Path)
		}
	}
	if !reported {
		return false
	}
	q, name, from := f.findTargetQueue()
	var what string
	if q == nil {
		q, what = live.sched.Root, "the root queue"
		notes = append(notes, fmt.Sprintf("queue %q (from %s) is not in the FairScheduler's tree (see cluster.queue-max-allocation): judging the root queue", name, from))
	} else {
		what = fmt.Sprintf("queue %s (from %s)", q.Path, from)
	}
	if q.SchedulingPolicy == "" {
		return false
	}
	// The allocation file may not be what the RM loaded.
	if path, alloc, _, _ := f.fairAllocations(); alloc != nil && isDRF(alloc.DefaultPolicy) != isDRF(live.sched.Root.SchedulingPolicy) {
		shown := alloc.DefaultPolicy
		if shown == "" {
			shown = "fair (the default)"
		}
		notes = append(notes, fmt.Sprintf("%s says defaultQueueSchedulingPolicy %s, but the ResourceManager's root queue uses %s: it has not loaded this file", path, shown, live.sched.Root.SchedulingPolicy))
	}
	if isDRF(q.SchedulingPolicy) {
		out.pass(live.rm, "%s", withNotes(fmt.Sprintf("%s of the FairScheduler at %s schedules with %s (dominant resource fairness)", what, live.rm, q.SchedulingPolicy), notes))
		return true
	}
	fix := fmt.Sprintf("set <schedulingPolicy>drf</schedulingPolicy> for queue %s (or <defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>) in the FairScheduler's allocation file", q.Path)
	if len(drfLeaves) > 0 {
		fix += ", or submit to a drf queue: " + strings.Join(drfLeaves, ", ")
	}
	f.calculatorFinding(out, ext, live.rm, fix,
		withNotes(fmt.Sprintf("%s of the FairScheduler at %s uses policy %s, which looks at memory only", what, live.rm, q.SchedulingPolicy), notes))
	return true
}

// isDRF reports whether a FairScheduler policy is dominant resource fairness.
func isDRF(policy string) bool {
	p := strings.TrimSpace(policy)
	return strings.EqualFold(p, "drf") || strings.HasSuffix(p, ".DominantResourceFairnessPolicy")
}

// FairAllocations is what preflight reads from a FairScheduler allocation file.
type FairAllocations struct {
	// DefaultPolicy is <defaultQueueSchedulingPolicy> ("" when absent: fair), DefaultLine its line.
	DefaultPolicy string
	DefaultLine   int
	// Queues are the queues that set <schedulingPolicy>, depth first.
	Queues []FairQueue
}

// FairQueue is a FairScheduler queue with its own policy.
type FairQueue struct {
	Path   string // root.a.b
	Policy string
	Line   int
}

// maxFairDepth bounds the nesting of <queue> elements.
const maxFairDepth = 64

// ParseFairAllocations reads a FairScheduler allocation file (<allocations> with
// <defaultQueueSchedulingPolicy> and nested <queue name="..."> or legacy <pool> elements with
// <schedulingPolicy>). name is used in errors.
func ParseFairAllocations(name string, data []byte) (*FairAllocations, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	out := &FairAllocations{}
	var stack []string // element names
	var queues []string
	var text strings.Builder
	sawRoot := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line, _ := dec.InputPos()
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 {
				if t.Name.Local != "allocations" {
					return nil, fmt.Errorf("%s: root element is <%s>, want <allocations>", name, t.Name.Local)
				}
				sawRoot = true
			}
			if len(stack) > maxFairDepth {
				return nil, fmt.Errorf("%s: elements nested more than %d deep", name, maxFairDepth)
			}
			stack = append(stack, t.Name.Local)
			text.Reset()
			if t.Name.Local == "queue" || t.Name.Local == "pool" {
				qn := ""
				for _, a := range t.Attr {
					if a.Name.Local == "name" {
						qn = strings.TrimSpace(a.Value)
					}
				}
				queues = append(queues, qn)
			}
		case xml.CharData:
			text.Write(t)
		case xml.EndElement:
			line, _ := dec.InputPos()
			n := len(stack)
			if n == 0 {
				return nil, fmt.Errorf("%s:%d: unexpected </%s>", name, line, t.Name.Local)
			}
			el := stack[n-1]
			parent := ""
			if n >= 2 {
				parent = stack[n-2]
			}
			val := strings.TrimSpace(text.String())
			switch {
			case el == "defaultQueueSchedulingPolicy" && parent == "allocations":
				out.DefaultPolicy, out.DefaultLine = val, line
			case el == "schedulingPolicy" && (parent == "queue" || parent == "pool"):
				out.Queues = append(out.Queues, FairQueue{Path: fairQueuePath(queues), Policy: val, Line: line})
			case el == "queue" || el == "pool":
				queues = queues[:len(queues)-1]
			}
			stack = stack[:n-1]
			text.Reset()
		}
	}
	if !sawRoot {
		return nil, fmt.Errorf("%s: no <allocations> element", name)
	}
	return out, nil
}

// fairQueuePath joins queue names into a path below root.
func fairQueuePath(names []string) string {
	parts := []string{}
	for _, n := range names {
		if n != "" && n != "root" {
			parts = append(parts, n)
		}
	}
	return strings.Join(append([]string{"root"}, parts...), ".")
}
