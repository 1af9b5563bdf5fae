package cmdutil_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/yarn-er/yarn-er/cmd/internal/cmdutil"
)

func TestEnv(t *testing.T) {
	e := cmdutil.NewEnv([]string{"A=1", "B=", "A=2", "C=x=y"})
	v, ok := e.Lookup("A")
	assert.True(t, ok)
	assert.Equal(t, "2", v, "the last entry counts")
	v, ok = e.Lookup("B")
	assert.True(t, ok)
	assert.Empty(t, v)
	_, ok = e.Lookup("D")
	assert.False(t, ok)
	assert.Equal(t, "x=y", e.Getenv("C"))
	list := e.Environ()
	list[0] = "changed"
	assert.Equal(t, "A=1", e.Environ()[0], "Environ returns a copy")

	m := cmdutil.EnvFromMap(map[string]string{"Z": "1", "A": "2"})
	assert.Equal(t, []string{"A=2", "Z=1"}, m.Environ())
	assert.Empty(t, cmdutil.Env{}.Getenv("PATH"))
}

func TestEnvName(t *testing.T) {
	assert.Equal(t, "YARN_ER_HADOOP_CONF", cmdutil.EnvName("hadoop-conf"))
	assert.Equal(t, "YARN_ER_A_B", cmdutil.EnvName("a.b"))
}
