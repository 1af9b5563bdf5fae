package main

import (
	"debug/buildinfo"
	"debug/elf"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLinksNoKerberosNorHTTP guards the AM's memory: it authenticates with tokens only, so the
// binary links neither the Kerberos library (package internal/ipc/gss) nor net/http and
// crypto/tls, which together cost it about 1.2 MiB of resident memory; and its Hadoop messages are
// generated code that needs no protobuf reflection runtime (only protowire's varints), which would
// cost it another 2 MiB (docs/benchmarks.md).
func TestLinksNoKerberosNorHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads the ELF symbol table")
	}
	bin := binary(t)
	bi, err := buildinfo.ReadFile(bin)
	require.NoError(t, err)
	for _, m := range bi.Deps {
		assert.NotContains(t, m.Path, "jcmturner", "yarn-er-am links module %s", m.Path)
	}
	f, err := elf.Open(bin)
	require.NoError(t, err)
	defer f.Close()
	syms, err := f.Symbols()
	require.NoError(t, err)
	require.NotEmpty(t, syms)
	seen := map[string]string{}
	linksIPC := false
	for _, s := range syms {
		for _, pkg := range []string{
			"net/http.", "crypto/tls.", "github.com/yarn-er/yarn-er/internal/ipc/gss.",
			"google.golang.org/protobuf/reflect/", "google.golang.org/protobuf/internal/impl.", "google.golang.org/protobuf/proto.",
		} {
			if strings.HasPrefix(s.Name, pkg) {
				seen[pkg] = s.Name
			}
		}
		linksIPC = linksIPC || strings.HasPrefix(s.Name, "github.com/yarn-er/yarn-er/internal/ipc.")
	}
	assert.Empty(t, seen, "packages the AM must not link (one symbol each)")
	// The check itself sees packages: the IPC the AM does link is there.
	assert.True(t, linksIPC, "no symbol of internal/ipc: the symbol table is not what the test expects")
}
