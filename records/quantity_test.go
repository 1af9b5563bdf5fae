package records

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuantityInAgreesWithConvert checks that Quantity's In and Cmp give Convert's and Compare's
// results and errors (sentinels and Hadoop's messages) for every pair of units.
func TestQuantityInAgreesWithConvert(t *testing.T) {
	units := KnownUnits()
	values := []int64{0, 1, -1, 999, 1000, 1023, 1024, 1536, math.MaxInt64, math.MinInt64}
	for _, from := range units {
		for _, to := range units {
			for _, v := range values {
				q := Quantity{Value: v, Units: from}
				want, werr := Convert(from, to, v)
				got, exact, err := q.In(to)
				if werr != nil {
					require.Error(t, err, "%s in %q", q, to)
					assert.ErrorIs(t, err, ErrOverflow)
					assert.ErrorContains(t, err, "overflows")
					continue
				}
				require.NoError(t, err, "%s in %q", q, to)
				assert.Equal(t, want, got, "%s in %q", q, to)
				back, _ := Compare(to, got, from, v)
				assert.Equal(t, back == 0, exact, "%s in %q", q, to)

				wc, err := Compare(from, v, to, 7)
				require.NoError(t, err)
				c, err := q.Cmp(Quantity{Value: 7, Units: to})
				require.NoError(t, err)
				assert.Equal(t, wc, c, "%s vs 7%s", q, to)
			}
		}
	}

	_, _, err := Quantity{Value: 1, Units: "Mi"}.In("MB")
	assert.ErrorIs(t, err, ErrUnknownUnit)
	var ue *UnitError
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

}

func TestQuantity(t *testing.T) {
	for _, tc := range []struct {
		a, b Quantity
		cmp  int
	}{
		{Quantity{1, "Gi"}, Quantity{1024, "Mi"}, 0},
		{Quantity{1, "G"}, Quantity{1, "Gi"}, -1},
		{Quantity{1000, "m"}, Quantity{1, ""}, 0},
		{Quantity{math.MaxInt64, "Pi"}, Quantity{math.MaxInt64, "Ti"}, 1},
		{Quantity{-1, "k"}, Quantity{0, ""}, -1},
		{Quantity{5, ""}, Quantity{5, ""}, 0},
	} {
		got, err := tc.a.Cmp(tc.b)
		require.NoError(t, err)
		assert.Equal(t, tc.cmp, got, "%s vs %s", tc.a, tc.b)
		back, err := tc.b.Cmp(tc.a)
		require.NoError(t, err)
		assert.Equal(t, -tc.cmp, back)
	}
	_, err := Quantity{1, "X"}.Cmp(Quantity{1, "Mi"})
	assert.ErrorIs(t, err, ErrUnknownUnit)

	v, exact, err := Quantity{3, "Gi"}.In("Mi")
	require.NoError(t, err)
	assert.Equal(t, int64(3072), v)
	assert.True(t, exact)
	v, exact, err = Quantity{1500, "Mi"}.In("Gi")
	require.NoError(t, err)
	assert.Equal(t, int64(1), v)
	assert.False(t, exact)
	_, _, err = Quantity{math.MaxInt64, "Pi"}.In("")
	assert.ErrorContains(t, err, "overflows")
	_, _, err = Quantity{1, ""}.In("bogus")
	assert.ErrorIs(t, err, ErrUnknownUnit)
	assert.Equal(t, "4Gi", Quantity{4, "Gi"}.String())
}
