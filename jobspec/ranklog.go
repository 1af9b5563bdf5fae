package jobspec

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// RankStartMessage is the message of the ApplicationMaster's log record for each container a
// rank is started in, with the attributes rank, container and node. The AM logs to stderr, which
// YARN keeps as the AM container's log (and aggregates with the others): `yarn-er app logs
// --rank` reads the rank → container table from it.
const RankStartMessage = "am: starting rank"

// RankStart is one rank-start record of the AM's log.
type RankStart struct {
	// Role is the rank's role ("" in the log of an AM of a job without roles: DefaultRole).
	Role string
	// Rank is YARN_ER_RANK of the container; Container its id; Node its NodeManager (host:port).
	Rank      int
	Container string
	Node      string
	// Launch is the how-manieth container of the rank this is, from 1 (0: not in the record).
	Launch int
}

// RoleName is the rank's role, DefaultRole when the record names none.
func (r RankStart) RoleName() string {
	if r.Role == "" {
		return DefaultRole
	}
	return r.Role
}

var (
	textRank      = regexp.MustCompile(`(?:^|\s)rank=(\d{1,9})(?:\s|$)`)
	textContainer = regexp.MustCompile(`(?:^|\s)container=(container_[0-9A-Za-z_]+)(?:\s|$)`)
	textNode      = regexp.MustCompile(`(?:^|\s)node=([^\s"]+)(?:\s|$)`)
	textRole      = regexp.MustCompile(`(?:^|\s)role=([A-Za-z][A-Za-z0-9_-]{0,62})(?:\s|$)`)
	textLaunch    = regexp.MustCompile(`(?:^|\s)launch=(\d{1,9})(?:\s|$)`)
)

// ParseRankStart parses one line of the AM's log, in slog's text or JSON form; ok is false for
// any other line.
func ParseRankStart(line string) (RankStart, bool) {
	line = strings.TrimSpace(line)
	if len(line) > 64<<10 || !strings.Contains(line, RankStartMessage) {
		return RankStart{}, false
	}
	if strings.HasPrefix(line, "{") {
		var rec struct {
			Msg       string `json:"msg"`
			Rank      *int   `json:"rank"`
			Container string `json:"container"`
			Node      string `json:"node"`
			Role      string `json:"role"`
			Launch    int    `json:"launch"`
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Msg != RankStartMessage || rec.Rank == nil || *rec.Rank < 0 ||
			!strings.HasPrefix(rec.Container, "container_") {
			return RankStart{}, false
		}
		role := rec.Role
		if role != "" && !validRoleName(role) {
			role = ""
		}
		return RankStart{Role: role, Rank: *rec.Rank, Container: rec.Container, Node: rec.Node, Launch: max(rec.Launch, 0)}, true
	}
	if !strings.Contains(line, `msg="`+RankStartMessage+`"`) {
		return RankStart{}, false
	}
	r, c := textRank.FindStringSubmatch(line), textContainer.FindStringSubmatch(line)
	if r == nil || c == nil {
		return RankStart{}, false
	}
	rank, err := strconv.Atoi(r[1])
	if err != nil {
		return RankStart{}, false
	}
	out := RankStart{Rank: rank, Container: c[1]}
	if n := textNode.FindStringSubmatch(line); n != nil {
		out.Node = n[1]
	}
	if m := textRole.FindStringSubmatch(line); m != nil {
		out.Role = m[1]
	}
	if m := textLaunch.FindStringSubmatch(line); m != nil {
		out.Launch, _ = strconv.Atoi(m[1])
	}
	return out, true
}
