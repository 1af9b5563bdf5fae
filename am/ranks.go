package am

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/yarn-er/yarn-er/amrm"
	"github.com/yarn-er/yarn-er/records"
)

// The ranks record: which container runs which rank, kept in the staging directory so that a
// later attempt of the ApplicationMaster can adopt the ranks still running instead of starting
// them again (the application keeps its containers across attempts: yarn-er submit asks YARN
// to). It is a directory ranks/ of empty entries, one per event, written before the event takes
// effect and never changed (metadata only: on HDFS, one NameNode call each, no DataNode):
//
//	rank-3.launch-2.failures-1.container_1700000000000_0001_01_000007   rank 3's 2nd launch, 1 failure before it
//	rank-3.done                                                          rank 3 exited 0
//
// A later attempt reads them all: each rank's newest launch names the container to adopt when
// YARN hands that container over (ContainersFromPreviousAttempts); a rank marked done is not run
// again.

// recordsDir is the ranks record's directory below the staging directory.
const recordsDir = "ranks"

// launchRecord names the entry of a rank's launch in container id.
func launchRecord(rank, launch, failures int, id records.ContainerID) string {
	return fmt.Sprintf("rank-%d.launch-%d.failures-%d.%s", rank, launch, failures, id)
}

// doneRecord names the entry of a rank that exited 0.
func doneRecord(rank int) string { return fmt.Sprintf("rank-%d.done", rank) }

// rankHistory is what the record says of one rank.
type rankHistory struct {
	// launch is the newest launch (0: none recorded), in container, with failures before it.
	launch    int
	failures  int
	container records.ContainerID
	done      bool
}

// readRecords reads the entries of the ranks record of a job of n ranks into one history per
// rank. Entries it cannot read, or of ranks outside 0..n-1, are returned as ignored (a record of
// another job's spec, or written by hand), not as an error.
func readRecords(n int, entries []string) (hist []rankHistory, ignored []string) {
	hist = make([]rankHistory, n)
	for _, e := range entries {
		rank, rest, ok := cutRank(e)
		if !ok || rank >= n {
			ignored = append(ignored, e)
			continue
		}
		if rest == "done" {
			hist[rank].done = true
			continue
		}
		launch, failures, id, ok := parseLaunch(rest)
		if !ok {
			ignored = append(ignored, e)
			continue
		}
		if launch > hist[rank].launch {
			hist[rank].launch, hist[rank].failures, hist[rank].container = launch, failures, id
		}
	}
	return hist, ignored
}

// cutRank splits "rank-N.REST".
func cutRank(e string) (int, string, bool) {
	head, rest, ok := strings.Cut(e, ".")
	if !ok {
		return 0, "", false
	}
	n, ok := number(strings.TrimPrefix(head, "rank-"), head)
	return n, rest, ok
}

// parseLaunch reads "launch-L.failures-F.CONTAINER_ID".
func parseLaunch(s string) (launch, failures int, id records.ContainerID, ok bool) {
	parts := strings.SplitN(s, ".", 3)
	if len(parts) != 3 {
		return 0, 0, records.ContainerID{}, false
	}
	launch, ok1 := number(strings.TrimPrefix(parts[0], "launch-"), parts[0])
	failures, ok2 := number(strings.TrimPrefix(parts[1], "failures-"), parts[1])
	id, err := records.ParseContainerID(parts[2])
	if !ok1 || !ok2 || launch < 1 || err != nil {
		return 0, 0, records.ContainerID{}, false
	}
	return launch, failures, id, true
}

// number reads a decimal of at most 9 digits from s; whole is s with its prefix, which must
// differ from s (the prefix was there).
func number(s, whole string) (int, bool) {
	if s == whole || s == "" || len(s) > 9 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strconv.Itoa(n) != s {
		return 0, false
	}
	return n, true
}

// adoption is what a new attempt does with each rank, from the record and the containers YARN
// handed over from the previous attempts.
type adoption struct {
	// adopted ranks run on in these containers.
	adopted map[int]amrm.Container
	// done ranks exited 0 before.
	done []int
	// lingering ranks had a container that YARN did not hand over: it ended while no
	// ApplicationMaster ran, or its end is still to be reported. The first heartbeats may bring
	// its exit status; otherwise the rank starts again.
	lingering map[int]records.ContainerID
	// unknown are handed-over containers that run no recorded rank: they are given back.
	unknown []amrm.Container
}

// planAdoption matches the record's histories with the containers handed over.
func planAdoption(hist []rankHistory, prev []amrm.Container) adoption {
	a := adoption{adopted: map[int]amrm.Container{}, lingering: map[int]records.ContainerID{}}
	byID := map[records.ContainerID]amrm.Container{}
	for _, c := range prev {
		byID[c.ID] = c
	}
	for rank, h := range hist {
		switch {
		case h.done:
			a.done = append(a.done, rank)
		case h.launch == 0:
		default:
			if c, ok := byID[h.container]; ok {
				a.adopted[rank] = c
				delete(byID, h.container)
			} else {
				a.lingering[rank] = h.container
			}
		}
	}
	for _, c := range prev {
		if _, left := byID[c.ID]; left {
			a.unknown = append(a.unknown, c)
		}
	}
	return a
}

// recordTimeout bounds one write to the ranks record.
const recordTimeout = 10 * time.Second

// writeRecord adds an entry to the ranks record while another attempt may follow. A failure is
// logged, not fatal: the rank then starts again in that attempt instead of being adopted.
func (r *runner) writeRecord(ctx context.Context, name string) {
	if !r.record {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	st, err := r.stagingConn(ctx)
	if err == nil && st == nil {
		err = errors.New("no staging directory")
	}
	if err == nil {
		err = st.Record(ctx, name)
	}
	if err != nil {
		r.log.Warn("am: ranks record not written: another attempt would start this rank again", "entry", name, "err", err)
	}
}

// adopt takes over what a previous attempt left (planAdoption): ranks still running in the
// containers YARN handed over, ranks that exited 0, and ranks whose container's end may still be
// reported. Without a readable record, the handed-over containers cannot be told apart: they are
// given back, and every rank starts again.
func (r *runner) adopt(ctx context.Context, reg *amrm.Registration) {
	prev := reg.ContainersFromPreviousAttempts
	ctx, cancel := context.WithTimeout(ctx, recordTimeout)
	defer cancel()
	st, err := r.stagingConn(ctx)
	var entries []string
	if err == nil && st == nil {
		err = errors.New("no staging directory")
	}
	if err == nil {
		entries, err = st.Records(ctx)
	}
	if err != nil {
		r.log.Warn("am: cannot read the ranks record: giving back the previous attempts' containers; every rank starts again",
			"containers", len(prev), "err", err)
		for _, c := range prev {
			_ = r.rm.Release(c.ID)
			r.res.Released++
		}
		return
	}
	hist, ignored := readRecords(len(r.slots), entries)
	if len(ignored) > 0 {
		r.log.Warn("am: ranks record entries ignored", "entries", ignored)
	}
	plan := planAdoption(hist, prev)
	for _, rank := range plan.done {
		s := r.slots[rank]
		s.state, s.exit, s.launches = succeeded, 0, hist[rank].launch
		r.res.AdoptedDone++
	}
	for rank, c := range plan.adopted {
		s := r.slots[rank]
		s.state, s.container, s.exit = running, c, -1000
		s.launches, s.failures = hist[rank].launch, hist[rank].failures
		r.byID[c.ID] = s
		r.res.Adopted++
		r.log.Info("am: rank adopted from the previous attempt", "rank", rank, "container", c.ID.String(), "node", c.Node,
			"launch", s.launches)
	}
	for rank, id := range plan.lingering {
		s := r.slots[rank]
		s.state, s.container, s.exit, s.lingering = running, amrm.Container{ID: id}, -1000, true
		s.launches, s.failures = hist[rank].launch, hist[rank].failures
		r.byID[id] = s
	}
	for _, c := range plan.unknown {
		r.log.Warn("am: giving back a previous attempt's container that runs no recorded rank", "container", c.ID.String(), "node", c.Node)
		_ = r.rm.Release(c.ID)
		r.res.Released++
	}
	r.log.Info("am: took over from the previous attempt", "attempt", r.opts.Identity.Attempt, "adopted", r.res.Adopted,
		"finished", r.res.AdoptedDone, "lingering", len(plan.lingering), "handedOver", len(prev))
}

// restartLingering starts again the ranks whose previous container was neither handed over nor
// reported ended by the first heartbeat: its end went unseen while no ApplicationMaster ran. Its
// exit status is unknown, so the restart is the cluster's doing (completed with taken): it does
// not use up the rank's restarts, within the bound of such restarts.
func (r *runner) restartLingering() {
	for _, s := range r.slots {
		if !s.lingering {
			continue
		}
		s.lingering = false
		if s.state != running {
			continue // its end was reported
		}
		delete(r.byID, s.container.ID)
		r.completed(s, -1000, "its container ended while no ApplicationMaster ran (exit status unknown)", true)
	}
}
