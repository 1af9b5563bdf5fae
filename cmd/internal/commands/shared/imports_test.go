package shared

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const cmdPrefix = "github.com/yarn-er/yarn-er/cmd/internal/commands/"

// commandImportViolations returns, for packages (import path → its imports), every import of one
// command package by another: a command package (cmd/internal/commands/NAME) may import the shared one
// and nothing else of cmd/internal/commands; shared imports none of them; only root, which registers every
// command, imports them all.
func commandImportViolations(packages map[string][]string) []string {
	var out []string
	for pkg, imports := range packages {
		name, ok := strings.CutPrefix(pkg, cmdPrefix)
		if !ok || name == "root" {
			continue
		}
		for _, imp := range imports {
			other, ok := strings.CutPrefix(imp, cmdPrefix)
			if !ok || (other == "shared" && name != "shared") {
				continue
			}
			out = append(out, pkg+" imports "+imp)
		}
	}
	return out
}

func TestCommandImportViolations(t *testing.T) {
	for _, tc := range []struct {
		name     string
		packages map[string][]string
		want     []string
	}{
		{"shared and cmdutil", map[string][]string{cmdPrefix + "app": {cmdPrefix + "shared", "github.com/yarn-er/yarn-er/cmd/internal/cmdutil"}}, nil},
		{"root imports every command", map[string][]string{cmdPrefix + "root": {cmdPrefix + "app", cmdPrefix + "submit"}}, nil},
		{"a command imports another", map[string][]string{cmdPrefix + "app": {cmdPrefix + "submit"}},
			[]string{cmdPrefix + "app imports " + cmdPrefix + "submit"}},
		{"shared imports a command", map[string][]string{cmdPrefix + "shared": {cmdPrefix + "discover"}},
			[]string{cmdPrefix + "shared imports " + cmdPrefix + "discover"}},
		{"outside cmd/internal/commands", map[string][]string{"github.com/yarn-er/yarn-er/cmd/yarn-er": {cmdPrefix + "root", cmdPrefix + "discover"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, commandImportViolations(tc.packages))
		})
	}
}

// TestCommandPackagesImportNoOtherCommand: what the command packages share lives here, not in
// another command's package (CONTRIBUTING.md, "Packages").
func TestCommandPackagesImportNoOtherCommand(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH") // the go tool is there wherever these tests are built
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, cmdPrefix+"...").Output()
	require.NoError(t, err)
	packages := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		require.NotEmpty(t, f)
		packages[f[0]] = f[1:]
	}
	require.Contains(t, packages, cmdPrefix+"app", "go list found the command packages")
	assert.Empty(t, commandImportViolations(packages))
}
