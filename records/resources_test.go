package records

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVectorOrder(t *testing.T) {
	var v Resources
	v.Set("yarn.io/gpu", Quantity{Value: 2})
	v.Set(VCores, Quantity{Value: 4})
	v.Set("yarn.io/fpga", Quantity{Value: 1})
	v.Set(MemoryMB, Quantity{Value: 4096, Units: MemoryUnits})
	v.Set("yarn.io/gpu", Quantity{Value: 3}) // update keeps the place
	assert.Equal(t, `{"memory-mb":4096,"vcores":4,"yarn.io/gpu":3,"yarn.io/fpga":1}`, vectorJSON(t, v))
	assert.Equal(t, "<memory-mb:4096, vcores:4, yarn.io/gpu:3, yarn.io/fpga:1>", v.String())
	assert.Equal(t, 4, v.Len())
	got, ok := v.Get("yarn.io/fpga")
	assert.True(t, ok)
	assert.Equal(t, int64(1), got)
	_, ok = v.Get("nope")
	assert.False(t, ok)

	var w Resources
	w.Set(VCores, Quantity{Value: 1})
	w.Set(MemoryMB, Quantity{Value: 1, Units: MemoryUnits})
	assert.Equal(t, []Resource{{MemoryMB, 1, MemoryUnits}, {VCores, 1, ""}}, w.All())
	var empty Resources
	assert.Equal(t, `{}`, vectorJSON(t, empty))
	assert.Equal(t, "<>", empty.String())
}

func TestVectorJSONExact(t *testing.T) {
	var v Resources
	v.Set(MemoryMB, Quantity{Value: math.MaxInt64, Units: MemoryUnits})
	v.Set("a\"b", Quantity{Value: math.MinInt64})
	raw := vectorJSON(t, v)
	assert.Equal(t, `{"memory-mb":9223372036854775807,"a\"b":-9223372036854775808}`, raw)
	var back Resources
	require.NoError(t, json.Unmarshal([]byte(raw), &back))
	assert.Equal(t, v, back)

	// Inside a struct, through the standard encoder, order and exactness hold.
	b, err := json.Marshal(struct {
		R Resources `json:"resource"`
	}{v})
	require.NoError(t, err)
	assert.Equal(t, `{"resource":{"memory-mb":9223372036854775807,"a\"b":-9223372036854775808}}`, string(b))

	var bad Resources
	assert.Error(t, json.Unmarshal([]byte(`{"x":1.5}`), &bad))
	assert.Error(t, json.Unmarshal([]byte(`{"x":9223372036854775808}`), &bad))
	assert.Error(t, json.Unmarshal([]byte(`{"x":"1"}`), &bad))
	assert.Error(t, json.Unmarshal([]byte(`[1]`), &bad))
	require.NoError(t, json.Unmarshal([]byte(`{"yarn.io/gpu":2,"memory-mb":1}`), &bad))
	assert.Equal(t, `{"memory-mb":1,"yarn.io/gpu":2}`, vectorJSON(t, bad))
}

func vectorJSON(t testing.TB, v Resources) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestResourcesKeepUnits(t *testing.T) {
	var v Resources
	v.Set(MemoryMB, Quantity{Value: 4, Units: "Gi"})
	v.Set("example.com/mem", Quantity{Value: 2, Units: "Ki"})
	q, ok := v.Quantity(MemoryMB)
	require.True(t, ok)
	mi, exact, err := q.In(MemoryUnits)
	require.NoError(t, err)
	assert.True(t, exact)
	assert.Equal(t, int64(4096), mi)
	assert.Equal(t, []Resource{{MemoryMB, 4, "Gi"}, {"example.com/mem", 2, "Ki"}}, v.All())
	assert.Equal(t, Quantity{Value: 2, Units: "Ki"}, v.All()[1].Quantity())
	_, ok = v.Quantity("nope")
	assert.False(t, ok)
}

func TestNewResources(t *testing.T) {
	v := NewResources(2048, 2, Resource{Name: GPU, Value: 1})
	assert.Equal(t, []Resource{{MemoryMB, 2048, MemoryUnits}, {VCores, 2, ""}, {GPU, 1, ""}}, v.All())
	assert.Equal(t, "<memory-mb:2048, vcores:2, yarn.io/gpu:1>", v.String())
}

func TestResourcesAdd(t *testing.T) {
	a := ResourcesOf(Resource{MemoryMB, 1024, "Mi"}, Resource{GPU, 1, ""}, Resource{"r", 1, "Gi"})
	b := ResourcesOf(Resource{MemoryMB, 1024, "Mi"}, Resource{FPGA, 2, ""}, Resource{"r", 512, "Mi"}, Resource{"big", math.MaxInt64, ""})
	sum, err := a.Add(b)
	require.NoError(t, err)
	assert.Equal(t, []Resource{{MemoryMB, 2048, "Mi"}, {GPU, 1, ""}, {"r", 1, "Gi"}, {FPGA, 2, ""}, {"big", math.MaxInt64, ""}}, sum.All(),
		"512Mi in Gi rounds toward zero as Hadoop does; a's order, then what only b has")
	assert.Equal(t, int64(1024), a.Value(MemoryMB), "Add leaves its operands alone")
	sat, err := ResourcesOf(Resource{"x", math.MaxInt64, ""}).Add(ResourcesOf(Resource{"x", 1, ""}))
	require.NoError(t, err)
	assert.Equal(t, int64(math.MaxInt64), sat.Value("x"))
	neg, err := ResourcesOf(Resource{"x", math.MinInt64, ""}).Add(ResourcesOf(Resource{"x", -1, ""}))
	require.NoError(t, err)
	assert.Equal(t, int64(math.MinInt64), neg.Value("x"))
	_, err = ResourcesOf(Resource{"x", 1, "bogus"}).Add(ResourcesOf(Resource{"x", 1, "Mi"}))
	assert.ErrorIs(t, err, ErrUnknownUnit)
	var empty Resources
	got, err := empty.Add(Resources{})
	require.NoError(t, err)
	assert.Equal(t, 0, got.Len())
	assert.Equal(t, Resources{}, got)
	assert.Zero(t, got.Value(GPU), "a missing type has amount 0")
}
