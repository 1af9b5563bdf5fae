package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/yarn-er/yarn-er/cmd/internal/amrun/amruntest"
)

// BenchmarkAMProcess runs the static yarn-er binary (CGO_ENABLED=0, as submit stages it) as
// `yarn-er am` in a process of its own against a fake ResourceManager and NodeManagers
// (amrmfake: the real Hadoop IPC, SASL and protobuf; containers exit 0 at once) and reports
// the peak RSS and its anonymous and file-backed parts at exit, as the AM logs them. It is the
// quick, cluster-free measure of the AM's memory; bench/distshell.sh measures it on the
// mini-YARN.
//
//	go test ./cmd/yarn-er/ -run '^$' -bench BenchmarkAMProcess -benchtime 5x
func BenchmarkAMProcess(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "yarn-er")
	require.NoError(b, goBuild(bin, "CGO_ENABLED=0"))
	for _, n := range []int{4, 64} {
		b.Run(fmt.Sprintf("containers=%d", n), func(b *testing.B) {
			amruntest.Report(b, bin, n)
		})
	}
}
