package jobspec

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseRankStart: the record the AM writes (slog text, its default, or JSON) parses back; other
// lines do not.
func TestParseRankStart(t *testing.T) {
	for _, h := range []func(*bytes.Buffer) slog.Handler{
		func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
	} {
		var b bytes.Buffer
		// The attributes as the AM logs them (am/am.go).
		slog.New(h(&b)).Info(RankStartMessage, "rank", 2, "container", "container_1_0001_01_000004", "node", "localhost:44201",
			"resource", "memory-mb=128,vcores=1", "launch", 1)
		got, ok := ParseRankStart(strings.TrimSpace(b.String()))
		require.True(t, ok, b.String())
		assert.Equal(t, RankStart{Rank: 2, Container: "container_1_0001_01_000004", Node: "localhost:44201", Launch: 1}, got)
		assert.Equal(t, DefaultRole, got.RoleName())

		// A job with roles: the AM names the role first.
		b.Reset()
		slog.New(h(&b)).Info(RankStartMessage, "role", "worker", "rank", 1, "container", "container_1_0001_01_000005", "node", "localhost:44201",
			"resource", "memory-mb=128,vcores=1", "launch", 2)
		got, ok = ParseRankStart(strings.TrimSpace(b.String()))
		require.True(t, ok, b.String())
		assert.Equal(t, RankStart{Role: "worker", Rank: 1, Container: "container_1_0001_01_000005", Node: "localhost:44201", Launch: 2}, got)
	}
	for _, line := range []string{
		"",
		`time=x level=INFO msg="am: rank exited 0" rank=2 container=container_1_0001_01_000004`,
		`time=x level=INFO msg="am: starting rank" rank=-1 container=container_1_0001_01_000004`,
		`time=x level=INFO msg="am: starting rank" container=container_1_0001_01_000004`,
		`time=x level=INFO msg="am: starting rank" rank=1 container=nope`,
		`hello am: starting rank rank=1 container=container_1_0001_01_000004`,
		`{"msg":"am: starting rank","rank":"x","container":"container_1"}`,
		`{"msg":"am: starting rank","rank":1,"container":"c"}`,
	} {
		_, ok := ParseRankStart(line)
		assert.False(t, ok, line)
	}
}

func FuzzParseRankStart(f *testing.F) {
	f.Add(`time=2026-12-01T11:58:41.902Z level=INFO msg="am: starting rank" rank=0 container=container_1796126265079_0001_01_000002 node=localhost:44201 resource="memory-mb=128,vcores=1,yarn.io/fpga=0,yarn.io/gpu=0" launch=1`)
	f.Add(`{"time":"x","level":"INFO","msg":"am: starting rank","rank":3,"container":"container_1_0001_01_000005","node":"h:1"}`)
	f.Fuzz(func(t *testing.T, line string) {
		rs, ok := ParseRankStart(line)
		if ok && (rs.Rank < 0 || !strings.HasPrefix(rs.Container, "container_")) {
			t.Fatalf("%q parsed to %+v", line, rs)
		}
	})
}
