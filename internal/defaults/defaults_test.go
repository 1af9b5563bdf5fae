package defaults

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPositive(t *testing.T) {
	assert.Equal(t, 5, Positive(5, 9))
	assert.Equal(t, 9, Positive(0, 9))
	assert.Equal(t, 9, Positive(-1, 9))
	assert.Equal(t, int64(1), Positive(int64(1), 7))
	assert.Equal(t, 2*time.Second, Positive(time.Duration(0), 2*time.Second))
	assert.Equal(t, time.Millisecond, Positive(time.Millisecond, time.Hour))
	assert.InDelta(t, 0.5, Positive(0.5, 3.0), 0)
}
