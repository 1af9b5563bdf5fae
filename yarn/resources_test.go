package yarn

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/profile"
)

// TestQuantityIsProfileArithmetic checks that Quantity's unit arithmetic is package profile's:
// same results, same errors (sentinels and Hadoop's messages).
func TestQuantityIsProfileArithmetic(t *testing.T) {
	units := profile.KnownUnits()
	values := []int64{0, 1, -1, 999, 1000, 1023, 1024, 1536, math.MaxInt64, math.MinInt64}
	for _, from := range units {
		for _, to := range units {
			for _, v := range values {
				q := Quantity{Value: v, Units: from}
				want, werr := profile.Convert(from, to, v)
				got, exact, err := q.In(to)
				if werr != nil {
					require.Error(t, err, "%s in %q", q, to)
					assert.ErrorIs(t, err, ErrOverflow)
					assert.ErrorIs(t, err, profile.ErrOverflow)
					assert.ErrorContains(t, err, "overflows")
					continue
				}
				require.NoError(t, err, "%s in %q", q, to)
				assert.Equal(t, want, got, "%s in %q", q, to)
				back, _ := profile.Compare(to, got, from, v)
				assert.Equal(t, back == 0, exact, "%s in %q", q, to)

				wc, err := profile.Compare(from, v, to, 7)
				require.NoError(t, err)
				c, err := q.Cmp(Quantity{Value: 7, Units: to})
				require.NoError(t, err)
				assert.Equal(t, wc, c, "%s vs 7%s", q, to)
			}
		}
	}

	_, _, err := Quantity{Value: 1, Units: "Mi"}.In("MB")
	assert.ErrorIs(t, err, ErrUnknownUnit)
	assert.ErrorIs(t, err, profile.ErrUnknownUnit)
	var ue *profile.UnitError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "MB", ue.Unit)
	assert.ErrorContains(t, err, "Unknown unit 'MB'. Known units are")

	// The RM reported both in the same unit: compared and returned as they are.
	c, err := Quantity{Value: 2, Units: "X"}.Cmp(Quantity{Value: 3, Units: "X"})
	require.NoError(t, err)
	assert.Equal(t, -1, c)
	v, exact, err := Quantity{Value: 5, Units: "X"}.In("X")
	require.NoError(t, err)
	assert.Equal(t, int64(5), v)
	assert.True(t, exact)

	// Exactness across unit families: 1k = 1000, not a whole number of Ki.
	v, exact, err = Quantity{Value: 1, Units: "k"}.In("Ki")
	require.NoError(t, err)
	assert.Equal(t, int64(0), v)
	assert.False(t, exact)
	v, exact, err = Quantity{Value: 1024, Units: ""}.In("Ki")
	require.NoError(t, err)
	assert.Equal(t, int64(1), v)
	assert.True(t, exact)

	assert.Equal(t, profile.Quantity{Value: 4, Unit: "Gi"}.String(), Quantity{Value: 4, Units: "Gi"}.String())
	assert.Equal(t, profile.MemoryMB, Memory)
	assert.Equal(t, profile.VCores, VCores)
	assert.Equal(t, profile.GPU, GPU)
	assert.Equal(t, profile.FPGA, FPGA)
}
