package yarnfake

import (
	"io"
	"net/http"
	"time"
)

// Fault changes how the RM answers a route. The zero Fault changes nothing; fields combine
// (a Delay, then a Status).
type Fault struct {
	// Status, if not 0, answers with this status, ContentType and Body instead of the normal
	// answer (e.g. 500, or 503 with Hadoop's RemoteException JSON).
	Status int
	// ContentType of the fault's answer; "application/json" if Body is set and this is empty.
	ContentType string
	// Body of the fault's answer.
	Body string
	// Delay holds the answer back this long (ended early when the client gives up).
	Delay time.Duration
	// Hang never answers: the request is held until the client gives up or the RM closes.
	Hang bool
	// Malformed sends the first half of the normal answer only (invalid JSON).
	Malformed bool
	// Times limits the fault to the next Times requests of the route; 0 means every request.
	Times int
}

type faultState struct {
	Fault
	left int // requests left; <0: unlimited
}

// Fault injects f into every request of route ("METHOD /path", or "*" for every route) until
// ClearFaults; faults of one route apply one after another as their Times run out.
func (rm *RM) Fault(route string, f Fault) {
	left := -1
	if f.Times > 0 {
		left = f.Times
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	rm.faults[route] = append(rm.faults[route], &faultState{Fault: f, left: left})
}

// ClearFaults removes every fault.
func (rm *RM) ClearFaults() {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	rm.faults = map[string][]*faultState{}
}

// takeFault returns the fault for route (the route's own before "*"), counting it; rm.mu held.
func (rm *RM) takeFault(route string) *Fault {
	for _, key := range []string{route, "*"} {
		list := rm.faults[key]
		for len(list) > 0 && list[0].left == 0 {
			list = list[1:]
		}
		rm.faults[key] = list
		if len(list) == 0 {
			continue
		}
		fs := list[0]
		if fs.left > 0 {
			fs.left--
		}
		f := fs.Fault
		return &f
	}
	return nil
}

// applyFault serves the fault's part of an answer; true if the answer is complete.
func (rm *RM) applyFault(w http.ResponseWriter, r *http.Request, f *Fault) bool {
	if f.Hang {
		rm.wait(r.Context(), -1)
		return true
	}
	if f.Delay > 0 && !rm.wait(r.Context(), f.Delay) {
		return true
	}
	if f.Status == 0 {
		return false
	}
	ct := f.ContentType
	if ct == "" && f.Body != "" {
		ct = "application/json"
	}
	if ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(f.Status)
	_, _ = io.WriteString(w, f.Body)
	return true
}
