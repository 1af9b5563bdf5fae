package suggest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"gpu", "gpus", 1}, {"kitten", "sitting", 3}, {"abc", "", 3},
		{strings.Repeat("a", 65), "a", 65},
	} {
		assert.Equal(t, tc.want, Distance(tc.a, tc.b), "%q %q", tc.a, tc.b)
	}
}

func TestNearest(t *testing.T) {
	known := []string{"gpus", "fpgas", "memory", "depends_on"}
	assert.Equal(t, "gpus", Nearest("gpu", known, false))
	assert.Equal(t, "gpus", Nearest("GPUS", known, false))
	assert.Equal(t, "", Nearest("vcore", known, false))
	assert.Equal(t, "", Nearest("", known, true))
	assert.Equal(t, "depends_on", Nearest("depends", known, true), "a prefix is a likely slip")
	assert.Equal(t, "", Nearest("depends", known, false))
}
