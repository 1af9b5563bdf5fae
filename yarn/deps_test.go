package yarn

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoConfigurationParserInDeps: the REST client takes plain options; it never depends on the
// configuration loaders (conf, profile) nor, through them, on the Flink YAML parser.
func TestNoConfigurationParserInDeps(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH") // the go tool is there wherever these tests are built
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	require.NoError(t, err)
	for _, dep := range strings.Fields(string(out)) {
		assert.NotContains(t, []string{"go.yaml.in/yaml/v3", "gopkg.in/yaml.v3", "github.com/yarn-er/yarn-er/conf", "github.com/yarn-er/yarn-er/profile"}, dep)
	}
}
