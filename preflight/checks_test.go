package preflight

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docCheck is a check as docs/preflight.md documents it: its id and the heading of its group.
type docCheck struct {
	id    string
	group string
}

// readDocChecks returns the checks of docs/preflight.md's "## The checks" section, in order: each
// "#### `id`" heading with the "### Group" heading above it.
func readDocChecks(t *testing.T, path string) []docCheck {
	t.Helper()
	fh, err := os.Open(path)
	require.NoError(t, err)
	defer fh.Close()
	var out []docCheck
	in, group := false, ""
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "## The checks":
			in = true
		case strings.HasPrefix(line, "## "):
			in = false
		case in && strings.HasPrefix(line, "### "):
			group = strings.TrimPrefix(line, "### ")
		case in && strings.HasPrefix(line, "#### "):
			out = append(out, docCheck{id: strings.Trim(strings.TrimPrefix(line, "#### "), "` "), group: group})
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// The table of checks is the documented list: the same ids in the same order, each under its
// group's heading. Adding a check without its doc line (or documenting one out of order) fails.
func TestTableMatchesDocs(t *testing.T) {
	docs := readDocChecks(t, "../docs/preflight.md")
	var want []docCheck
	for _, c := range checkTable() {
		want = append(want, docCheck{id: c.id, group: c.area.Title()})
	}
	assert.Equal(t, want, docs)
}

// Each row is well formed: a unique id whose prefix is its area, the areas in report order, and
// a run function.
func TestCheckTable(t *testing.T) {
	table := checkTable()
	require.NotEmpty(t, table)
	seen := map[string]bool{}
	areaRank := map[Area]int{}
	for i, a := range Areas() {
		areaRank[a] = i
	}
	last := 0
	for _, c := range table {
		assert.False(t, seen[c.id], "duplicate id %s", c.id)
		seen[c.id] = true
		assert.Equal(t, AreaOf(c.id), c.area, c.id)
		rank, ok := areaRank[c.area]
		assert.True(t, ok, "unknown area of %s", c.id)
		assert.GreaterOrEqual(t, rank, last, "%s comes after a check of a later area", c.id)
		last = rank
		assert.NotNil(t, c.run, c.id)
	}
	assert.Equal(t, len(table), len(IDs()))
}

// A check reports only under its own id, and the flink.* checks of a container given directly
// are not applicable: they skip without making the verdict uncertain.
func TestResultsAndNotApplicable(t *testing.T) {
	c := newCollector()
	c.of("flink.a").notApplicable("the %s is given directly", "container")
	c.of("yarn.b").skip("no Hadoop configuration")
	c.of("yarn.c").notApplicable("not used")
	c.of("yarn.c").pass("", "but checked")
	got := c.checks()
	for _, ch := range got {
		if ch.ID == "flink.a" {
			assert.Equal(t, Check{ID: "flink.a", Status: StatusSkip, Message: "the container is given directly"}, ch)
		}
	}
	// flink.a counts; yarn.b is a skip that could not run; yarn.c passed.
	assert.Equal(t, 1, c.notApplicable())
}
