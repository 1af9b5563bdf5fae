// Package archtest checks CONTRIBUTING's import rules over the packages' real imports
// (`go list`), so that the structure stated there stays true.
package archtest

import (
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/yarn-er/yarn-er/"

// leafRules: the yarn-er packages each of these packages may import (CONTRIBUTING, "Nothing lower
// imports anything higher"); a rule ending in "/" allows a whole subtree.
var leafRules = map[string][]string{
	"records":      {"internal/boundedfile"},
	"conf":         {"internal/boundedfile", "internal/defaults", "internal/javafmt"},
	"discovery":    {},
	"logagg":       {},
	"jobspec":      {"records"},
	"yarn":         {"records", "kerberos", "internal/boundedfile", "internal/ctxsleep", "internal/defaults", "internal/redact"},
	"kerberos":     {"internal/boundedfile", "internal/redact"},
	"internal/ipc": {"records", "internal/hadooppb/", "internal/redact"},
	"amrm":         {"records", "internal/"},
	"profile":      {"conf", "internal/boundedfile", "internal/javafmt", "records"},
}

// krbImporters may import gokrb5: the login (package kerberos), the GSSAPI mechanism, the REST
// client's SPNEGO, staging, and the test helpers that mint or accept tickets.
var krbImporters = []string{"kerberos", "internal/ipc/gss", "yarn", "stage", "internal/testsupport/krb5test", "internal/ipc/ipctest"}

// cliWiring are the CLI's and the AM process's packages: only the command tree imports them.
func cliWiring(p string) bool {
	return p == "cmd/internal/cmdutil" || strings.HasPrefix(p, "cmd/internal/commands/") || p == "cmd/internal/amrun" ||
		strings.HasPrefix(p, "cmd/")
}

// mayImportWiring reports whether importer may import the wiring package dep.
func mayImportWiring(importer, dep string) bool {
	switch {
	case importer == "cmd/yarn-er" || importer == "cmd/yarn-er-am":
		return true
	case importer == "cmd/internal/commands/root":
		return strings.HasPrefix(dep, "cmd/internal/commands/") || dep == "cmd/internal/cmdutil"
	case strings.HasPrefix(importer, "cmd/internal/commands/"):
		// Command packages: the shared wiring and their helpers' test support, no other command
		// (TestCommandPackagesImportNoOtherCommand says which).
		return dep == "cmd/internal/cmdutil" || strings.HasPrefix(dep, "cmd/internal/cmdutil/") || dep == "cmd/internal/commands/shared" ||
			(dep == "cmd/internal/amrun" && importer == "cmd/internal/commands/am") || strings.HasPrefix(dep, importer+"/")
	case importer == "cmd/internal/cmdutil/cmdtest":
		return dep == "cmd/internal/cmdutil"
	case importer == "cmd/internal/amrun/amruntest":
		return dep == "cmd/internal/amrun"
	}
	return false
}

// violations checks an import graph (package → its yarn-er and third-party imports, module prefix
// removed from yarn-er's) against the rules, and returns one line per broken rule.
func violations(graph map[string][]string) []string {
	var out []string
	for pkg, imports := range graph {
		for _, dep := range imports {
			if strings.Contains(dep, "gokrb5") && !slices.Contains(krbImporters, pkg) {
				out = append(out, fmt.Sprintf("%s imports %s: only %s may use gokrb5", pkg, dep, strings.Join(krbImporters, ", ")))
			}
			if _, ours := graph[dep]; !ours {
				continue
			}
			if strings.HasPrefix(dep, "internal/testsupport/") && !strings.HasPrefix(pkg, "internal/testsupport/") {
				out = append(out, fmt.Sprintf("%s imports %s: test support is for _test.go files only", pkg, dep))
			}
			if cliWiring(dep) && !mayImportWiring(pkg, dep) {
				out = append(out, fmt.Sprintf("%s imports %s: an import from below into the CLI's wiring", pkg, dep))
			}
			if allowed, ok := leafRules[pkg]; ok && !allowedBy(allowed, dep) {
				out = append(out, fmt.Sprintf("%s imports %s: %s may import only %v", pkg, dep, pkg, allowed))
			}
		}
	}
	sort.Strings(out)
	return out
}

func allowedBy(allowed []string, dep string) bool {
	for _, a := range allowed {
		if a == dep || (strings.HasSuffix(a, "/") && strings.HasPrefix(dep, a)) {
			return true
		}
	}
	return false
}

// importGraph is `go list ./...`'s packages with their non-test imports.
func importGraph(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"...").Output()
	require.NoError(t, err)
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], module) {
			continue
		}
		var deps []string
		for _, d := range f[1:] {
			deps = append(deps, strings.TrimPrefix(d, module))
		}
		graph[strings.TrimPrefix(f[0], module)] = deps
	}
	return graph
}

// TestImportRules: the packages' real imports keep CONTRIBUTING's rules.
func TestImportRules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH") // the go tool is there wherever these tests are built
	}
	graph := importGraph(t)
	require.Contains(t, graph, "records", "go list saw the module")
	assert.Empty(t, violations(graph))
	// Every package a rule names exists: a renamed package would silently drop its rule.
	for pkg := range leafRules {
		assert.Contains(t, graph, pkg)
	}
	for _, pkg := range krbImporters {
		assert.Contains(t, graph, pkg)
	}
}

// TestImportRulesCatchViolations: the checker finds each kind of deliberate violation.
func TestImportRulesCatchViolations(t *testing.T) {
	base := map[string][]string{
		"records":                        {"internal/boundedfile"},
		"internal/boundedfile":           nil,
		"internal/testsupport/tabletest": nil,
		"cmd/internal/amrun":             nil,
		"yarn":                           {"records", "github.com/jcmturner/gokrb5/v8/client"},
		"conf":                           nil,
		"preflight":                      {"conf", "yarn"},
		"cmd/internal/cmdutil":           {"preflight"},
		"cmd/internal/commands/shared":   {"cmd/internal/cmdutil"},
		"cmd/internal/commands/app":      {"cmd/internal/commands/shared", "cmd/internal/cmdutil"},
		"cmd/internal/commands/root":     {"cmd/internal/commands/app", "cmd/internal/cmdutil"},
		"cmd/yarn-er":                    {"cmd/internal/commands/root"},
	}
	require.Empty(t, violations(base))
	for _, tc := range []struct {
		name, pkg, dep, want string
	}{
		{"a library into the CLI", "preflight", "cmd/internal/cmdutil", "preflight imports cmd/internal/cmdutil: an import from below into the CLI's wiring"},
		{"a command into another", "cmd/internal/commands/app", "cmd/internal/commands/root", "cmd/internal/commands/app imports cmd/internal/commands/root"},
		{"a test helper in a program", "preflight", "internal/testsupport/tabletest", "preflight imports internal/testsupport/tabletest: test support is for _test.go files only"},
		{"the AM binary into the CLI", "cmd/internal/amrun", "cmd/internal/commands/root", "cmd/internal/amrun imports cmd/internal/commands/root"},
		{"a leaf upwards", "records", "conf", "records imports conf: records may import only [internal/boundedfile]"},
		{"gokrb5 outside its packages", "preflight", "github.com/jcmturner/gokrb5/v8/spnego", "only kerberos, internal/ipc/gss"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := map[string][]string{}
			for k, v := range base {
				g[k] = slices.Clone(v)
			}
			g[tc.pkg] = append(g[tc.pkg], tc.dep)
			got := violations(g)
			require.Len(t, got, 1, "%v", got)
			assert.Contains(t, got[0], tc.want)
		})
	}
}
