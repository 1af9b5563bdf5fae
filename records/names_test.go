package records

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidateResourceName(t *testing.T) {
	// Every verdict checked against Hadoop 3.5.0's ResourceUtils.validateNameOfResourceNameAndThrowException.
	valid := []string{
		"myresource", "my_resource", "My-Resource01", "com.acme/myresource", "yarn.io/gpu", "yarn.io/fpga",
		"nvidia.com/gpu", "a", "A1_b.c-d", "a-b.c/d", "a.", "a-", "a..", "x/a.-_", "1.2.3/x", "a/b.c",
		"memory-mb", "vcores", "memory", "MEMORY",
	}
	invalid := []string{
		"10myresource", "my resource", "com/acme/myresource", "$NS/myresource", "-none-/myresource",
		"", "/gpu", "yarn.io/", "-a/b", "a-/b", "a..b/c", ".a/b", "a/b/c", "é", "gpu ", " gpu", "1gpu",
		"_gpu", "yarn.io/1gpu", "yarn.io/_g", "yarn_io/gpu", "gpu\n", "ＧＰＵ",
	}
	for _, n := range valid {
		assert.NoError(t, ValidateResourceName(n), "%q", n)
	}
	for _, n := range invalid {
		err := ValidateResourceName(n)
		require.Error(t, err, "%q", n)
		assert.ErrorIs(t, err, ErrInvalidName)
	}
	assert.EqualError(t, ValidateResourceName("10myresource"),
		"'10myresource' is not a valid resource name. A valid resource name must begin with a letter and "+
			"contain only letters, numbers, and any of: '.', '_', or '-'. A valid resource name may also be "+
			"optionally preceded by a name space followed by a slash. A valid name space consists of "+
			"period-separated groups of letters, numbers, and dashes.")
}

func TestReservedNames(t *testing.T) {
	for _, n := range []string{"memory", "memory-mb", "vcores"} {
		assert.True(t, IsReservedName(n), n)
	}
	for _, n := range []string{"MEMORY", "Memory-mb", "vcore", "cpu", "yarn.io/gpu", ""} {
		assert.False(t, IsReservedName(n), n)
	}
}
