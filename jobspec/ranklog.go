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
	// Rank is YARN_ER_RANK of the container; Container its id; Node its NodeManager (host:port).
	Rank      int
	Container string
	Node      string
}

var (
	textRank      = regexp.MustCompile(`(?:^|\s)rank=(\d{1,9})(?:\s|$)`)
	textContainer = regexp.MustCompile(`(?:^|\s)container=(container_[0-9A-Za-z_]+)(?:\s|$)`)
	textNode      = regexp.MustCompile(`(?:^|\s)node=([^\s"]+)(?:\s|$)`)
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
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Msg != RankStartMessage || rec.Rank == nil || *rec.Rank < 0 ||
			!strings.HasPrefix(rec.Container, "container_") {
			return RankStart{}, false
		}
		return RankStart{Rank: *rec.Rank, Container: rec.Container, Node: rec.Node}, true
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
	return out, true
}
