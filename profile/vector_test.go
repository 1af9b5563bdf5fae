package profile

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/records"
)

func TestVectorOrder(t *testing.T) {
	var v Vector
	v.Set("yarn.io/gpu", 2)
	v.Set(records.VCores, 4)
	v.Set("yarn.io/fpga", 1)
	v.Set(records.MemoryMB, 4096)
	v.Set("yarn.io/gpu", 3) // update keeps the place
	assert.Equal(t, `{"memory-mb":4096,"vcores":4,"yarn.io/gpu":3,"yarn.io/fpga":1}`, vectorJSON(t, v))
	assert.Equal(t, "<memory-mb:4096, vcores:4, yarn.io/gpu:3, yarn.io/fpga:1>", v.String())
	assert.Equal(t, 4, v.Len())
	got, ok := v.Get("yarn.io/fpga")
	assert.True(t, ok)
	assert.Equal(t, int64(1), got)
	_, ok = v.Get("nope")
	assert.False(t, ok)

	var w Vector
	w.Set(records.VCores, 1)
	w.Set(records.MemoryMB, 1)
	assert.Equal(t, []Resource{{records.MemoryMB, 1}, {records.VCores, 1}}, w.Resources())
	var empty Vector
	assert.Equal(t, `{}`, vectorJSON(t, empty))
	assert.Equal(t, "<>", empty.String())
}

func TestVectorJSONExact(t *testing.T) {
	var v Vector
	v.Set(records.MemoryMB, math.MaxInt64)
	v.Set("a\"b", math.MinInt64)
	raw := vectorJSON(t, v)
	assert.Equal(t, `{"memory-mb":9223372036854775807,"a\"b":-9223372036854775808}`, raw)
	var back Vector
	require.NoError(t, json.Unmarshal([]byte(raw), &back))
	assert.Equal(t, v, back)

	// Inside a struct, through the standard encoder, order and exactness hold.
	b, err := json.Marshal(struct {
		R Vector `json:"resource"`
	}{v})
	require.NoError(t, err)
	assert.Equal(t, `{"resource":{"memory-mb":9223372036854775807,"a\"b":-9223372036854775808}}`, string(b))

	var bad Vector
	assert.Error(t, json.Unmarshal([]byte(`{"x":1.5}`), &bad))
	assert.Error(t, json.Unmarshal([]byte(`{"x":9223372036854775808}`), &bad))
	assert.Error(t, json.Unmarshal([]byte(`{"x":"1"}`), &bad))
	assert.Error(t, json.Unmarshal([]byte(`[1]`), &bad))
	require.NoError(t, json.Unmarshal([]byte(`{"yarn.io/gpu":2,"memory-mb":1}`), &bad))
	assert.Equal(t, `{"memory-mb":1,"yarn.io/gpu":2}`, vectorJSON(t, bad))
}
